import type Docker from 'dockerode';

/**
 * The label naming the checkout an image was built from. Several checkouts (or versions) of
 * gatehouse can share one Docker engine, each with its own content-hashed images; an image is only
 * superseded by a newer build of the same checkout, never by another checkout's.
 */
export const IMAGE_SOURCE_LABEL = 'gatehouse.source';

/**
 * Every daemon change yields a new content-hashed image; older ones would pile up. Removes the
 * images of `kind` built from `source` other than `keep`. Images from another checkout, and
 * unlabelled ones (built before the label existed, by whatever checkout), are left alone. Docker
 * refuses to remove an image a container still uses (409), which is exactly the one to keep.
 */
export async function pruneSuperseded(
  d: Docker,
  kind: string,
  keep: string,
  source: string,
  log: (m: string) => void,
): Promise<string[]> {
  const removed: string[] = [];
  const images = await d.listImages({
    filters: { reference: [`gatehouse/${kind}`], label: [`${IMAGE_SOURCE_LABEL}=${source}`] },
  });
  for (const image of images) {
    if (image.Labels?.[IMAGE_SOURCE_LABEL] !== source) continue;
    const tags = (image.RepoTags ?? []).filter((t) => t !== `gatehouse/${kind}:latest`);
    if (tags.length === 0 || tags.includes(keep)) continue;
    for (const t of tags) {
      try {
        await d.getImage(t).remove();
        removed.push(t);
        log(`removed superseded image ${t}`);
      } catch {
        // in use by a container, or already gone: keep it
      }
    }
  }
  return removed;
}

/**
 * Run images (run-image.ts) of `source` that carry another runtime than `runtime`: every daemon
 * change derives new ones for each toolchain in use. Those of the current runtime stay, whatever
 * toolchain they were derived from; images a container still uses are kept (Docker refuses).
 */
export async function pruneStaleRunImages(
  d: Docker,
  runtimeLabel: string,
  runtime: string,
  source: string,
  log: (m: string) => void,
): Promise<string[]> {
  const removed: string[] = [];
  const images = await d.listImages({
    filters: { reference: ['gatehouse/run'], label: [`${IMAGE_SOURCE_LABEL}=${source}`] },
  });
  for (const image of images) {
    const carried = image.Labels?.[runtimeLabel];
    if (image.Labels?.[IMAGE_SOURCE_LABEL] !== source || !carried || carried === runtime) continue;
    for (const t of image.RepoTags ?? []) {
      try {
        await d.getImage(t).remove();
        removed.push(t);
        log(`removed run image ${t} of superseded runtime ${carried}`);
      } catch {
        // in use by a container, or already gone: keep it
      }
    }
  }
  return removed;
}
