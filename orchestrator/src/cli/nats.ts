import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newIdentity, serverConfig } from '../sandbox/index';

/** Writes a configuration and identity for a shared NATS server (docker-compose.yml). */
export async function natsInit(dir: string, force: boolean): Promise<void> {
  const identityFile = path.resolve(dir, 'identity.json');
  if (existsSync(identityFile) && !force) {
    throw new Error(
      `${identityFile} exists; a new identity would lock out every orchestrator using it. Pass --force to replace it.`,
    );
  }
  mkdirSync(path.resolve(dir), { recursive: true });
  const identity = newIdentity();
  writeFileSync(identityFile, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 });
  writeFileSync(path.resolve(dir, 'nats.conf'), await serverConfig(identity), { mode: 0o644 });
  process.stdout.write(
    `wrote ${path.resolve(dir, 'nats.conf')} and ${identityFile}\n` +
      `then: docker compose up -d nats, and export NATS_URL=nats://127.0.0.1:4222 ` +
      `GATEHOUSE_NATS_IDENTITY=${identityFile} GATEHOUSE_NATS_CONTAINER=gatehouse-nats-shared\n`,
  );
}
