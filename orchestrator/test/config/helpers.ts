import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A scratch folder, removed after the test. */
export function scratch(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gh-config-'));
  made.push(d);
  return d;
}

/** A repository folder whose .gatehouse/config.json holds `config` (a value, or raw text). */
export function repoWith(config?: unknown): string {
  const repo = scratch();
  if (config !== undefined) {
    mkdirSync(path.join(repo, '.gatehouse'));
    writeFileSync(
      path.join(repo, '.gatehouse', 'config.json'),
      typeof config === 'string' ? config : JSON.stringify(config, null, 2),
    );
  }
  return repo;
}

/** A trusted config file outside the repository. */
export function trustedFile(config: unknown): string {
  const file = path.join(scratch(), 'trusted.json');
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return file;
}
