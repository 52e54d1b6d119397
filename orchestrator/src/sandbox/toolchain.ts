import { docker, imageExists } from './docker';
import { SandboxError } from './errors';
import { pullImage } from './image-build';
import { ensureBuiltImage, PRESETS, type EnsureImagesOptions, type PresetName } from './images';

export const PRESET_PREFIX = 'preset:';

/**
 * The toolchain image a spec names, present locally: `preset:node` and `preset:python` are built
 * from images/presets/ (public base or the local debootstrap one, as ensureImages chooses), any
 * other reference is used as it is, pulled if it is not here. What the sandbox needs of it (linux
 * on this host's architecture, checked by ensureRunImage; bash, checked while deriving) is checked
 * when the run image is derived from it.
 */
export async function resolveToolchainImage(spec: string, opts: EnsureImagesOptions = {}): Promise<string> {
  const ref = spec.trim();
  if (ref === '') throw new SandboxError('no image given: name an image (e.g. python:3.12-slim) or a preset');
  if (ref.startsWith(PRESET_PREFIX)) {
    const name = ref.slice(PRESET_PREFIX.length);
    if (!(PRESETS as readonly string[]).includes(name))
      throw new SandboxError(
        `unknown preset ${ref}: the presets are ${PRESETS.map((p) => PRESET_PREFIX + p).join(', ')}`,
      );
    return ensureBuiltImage(`preset-${name as PresetName}`, opts);
  }
  const d = docker();
  if (await imageExists(ref, d)) return ref;
  opts.log?.(`pulling ${ref}`);
  try {
    await pullImage(d, ref);
  } catch (e) {
    throw new SandboxError(
      `image ${ref} is not on this machine and could not be pulled (${(e as Error).message.split('\n')[0]}). ` +
        `Where no registry answers, build it here (docker build -t ${ref} …) or load it (docker load -i FILE), ` +
        `or pick ${PRESETS.map((p) => PRESET_PREFIX + p).join(' or ')}.`,
    );
  }
  if (!(await imageExists(ref, d))) throw new SandboxError(`pulled ${ref} but the image is not there`);
  return ref;
}
