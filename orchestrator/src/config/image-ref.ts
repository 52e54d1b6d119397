/** The presets gatehouse builds itself (issue 12's toolchain images). */
export const IMAGE_PRESETS = ['node', 'python'] as const;

export const DEFAULT_IMAGE = 'preset:node';

// The Docker reference grammar, in short: [registry[:port]/]path[:tag][@digest].
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
// A first part is a registry only if it has a dot or a port or is localhost (Docker's rule).
const HOST = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const REGISTRY = `(?:localhost(?::\\d+)?|${HOST}(?:\\.${HOST})+(?::\\d+)?|${HOST}:\\d+|\\[[0-9a-fA-F:]+\\](?::\\d+)?)`;
const REFERENCE = new RegExp(
  `^(?:${REGISTRY}/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`,
);

/** What is wrong with an image setting (`preset:NAME` or a Docker image reference), if anything. */
export function imageProblem(image: string): string | undefined {
  if (image.startsWith('preset:')) {
    const name = image.slice('preset:'.length);
    if ((IMAGE_PRESETS as readonly string[]).includes(name)) return undefined;
    return `there is no preset ${JSON.stringify(name)}; presets: ${IMAGE_PRESETS.map((p) => `preset:${p}`).join(', ')}`;
  }
  if (image.length > 255 || !REFERENCE.test(image))
    return 'expected preset:node, preset:python or an image reference such as python:3.12-slim';
  return undefined;
}
