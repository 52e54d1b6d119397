import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type Docker from 'dockerode';
import {
  docker,
  ensureImages,
  ensureNatsServer,
  newIdentity,
  SandboxDriver,
  serverConfig,
} from '@gatehouse/orchestrator';
import { sh } from '../support/sandbox';

/**
 * NATS_URL: a shared server the orchestrator did not start (as with docker-compose.yml), configured
 * from the same identity format `gatehouse nats init` writes.
 */
describe('an external NATS server (NATS_URL)', () => {
  const name = `gatehouse-nats-ext-${process.pid}`;
  let container: Docker.Container;
  let env: NodeJS.ProcessEnv;
  const saved = { ...process.env };

  beforeAll(async () => {
    const images = await ensureImages();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-nats-'));
    chmodSync(dir, 0o755);
    const identity = newIdentity();
    writeFileSync(path.join(dir, 'identity.json'), JSON.stringify(identity), { mode: 0o600 });
    writeFileSync(path.join(dir, 'nats.conf'), await serverConfig(identity), { mode: 0o644 });
    container = await docker().createContainer({
      name,
      Image: images.nats,
      Cmd: ['-c', '/etc/nats/nats.conf'],
      ExposedPorts: { '4222/tcp': {} },
      Labels: { 'gatehouse.role': 'test-external-nats' },
      HostConfig: {
        Binds: [`${path.join(dir, 'nats.conf')}:/etc/nats/nats.conf:ro`],
        PortBindings: { '4222/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
      },
    });
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['4222/tcp']?.[0]?.HostPort;
    env = {
      NATS_URL: `nats://127.0.0.1:${port}`,
      GATEHOUSE_NATS_IDENTITY: path.join(dir, 'identity.json'),
      GATEHOUSE_NATS_CONTAINER: name,
    };
  });
  afterAll(async () => {
    process.env = saved;
    await container?.remove({ force: true });
  });

  it('refuses NATS_URL without the identity and container it needs, saying what to set', async () => {
    await expect(ensureNatsServer('unused', { NATS_URL: env.NATS_URL })).rejects.toThrow(
      /GATEHOUSE_NATS_IDENTITY .* GATEHOUSE_NATS_CONTAINER/s,
    );
  });

  it('runs sandboxes through it', async () => {
    Object.assign(process.env, env);
    const driver = await SandboxDriver.start({ reap: false });
    try {
      expect(driver.nats.embedded).toBe(false);
      expect(driver.nats.url).toBe(env.NATS_URL);
      const sandbox = await driver.createSandbox({ runId: 'run_external_nats' });
      expect(await sh(sandbox, 'echo through-the-shared-server')).toBe('through-the-shared-server\n');
    } finally {
      await driver.close();
      process.env = { ...saved };
    }
  });
});
