import { assertDockerReachable, ensureImages, PRESETS, type BaseChoice } from '../sandbox/index';

export async function buildImages(base: BaseChoice): Promise<void> {
  await assertDockerReachable();
  const started = Date.now();
  const images = await ensureImages({
    base,
    presets: [...PRESETS],
    log: (m) => process.stderr.write(`[gatehouse] ${m}\n`),
  });
  const presets = Object.entries(images.presets).map(([name, tag]) => `preset:${name} ${tag}`);
  process.stderr.write(
    `[gatehouse] images ready in ${Date.now() - started} ms: ${[...presets, images.nats, images.egress].join(', ')}\n`,
  );
}
