import { assertDockerReachable, ensureImages, type BaseChoice } from '../sandbox/index';

export async function buildImages(base: BaseChoice): Promise<void> {
  await assertDockerReachable();
  const started = Date.now();
  const images = await ensureImages({ base, log: (m) => process.stderr.write(`[gatehouse] ${m}\n`) });
  process.stderr.write(
    `[gatehouse] images ready in ${Date.now() - started} ms: ${images.sandbox}, ${images.nats}, ${images.egress}\n`,
  );
}
