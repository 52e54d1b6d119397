import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runner, step } from '../support/github-actions';

/**
 * Red team (issue 13): what install.mjs installs before the job runs gatehouse with the
 * repository's secrets. An unpinned name is whatever the registry serves under it today (someone
 * else's package, a hijacked release), so only exact versions and tarballs pass. npm and gatehouse
 * are stand-ins that record their arguments: nothing is downloaded.
 */
async function install(spec: string) {
  const r = runner();
  const bin = path.join(r.temp, 'fake-bin');
  mkdirSync(bin);
  const record = path.join(r.temp, 'npm-args');
  writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\necho "$@" > '${record}'\n`, { mode: 0o755 });
  writeFileSync(path.join(bin, 'gatehouse'), '#!/bin/sh\necho 0.0.0\n', { mode: 0o755 });
  const res = await step(r, 'install.mjs', {}, { GATEHOUSE_PACKAGE: spec, PATH: `${bin}:${process.env.PATH ?? ''}` });
  return { ...res, npm: existsSync(record) ? readFileSync(record, 'utf8').trim() : undefined };
}

describe('red team: the package the workflow installs', () => {
  it.each([
    ['gatehouse'],
    ['gatehouse@latest'],
    ['gatehouse@^1.2.0'],
    ['gatehouse@1'],
    ['gatehouse@1.2.x'],
    ['--global'],
    ['gatehouse@1.2.3 evil@1.0.0'],
    ['git+https://example.invalid/x.git'],
    ['http://example.invalid/gatehouse-1.2.3.tgz'],
  ])('refuses %s before npm runs', async (spec) => {
    const r = await install(spec);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is not pinned');
    expect(r.npm).toBeUndefined();
  });

  it.each([
    ['gatehouse@1.2.3'],
    ['@acme/gatehouse@1.2.3-rc.1'],
    ['./gatehouse-1.2.3.tgz'],
    ['https://example.invalid/gatehouse-1.2.3.tgz'],
  ])('installs %s, as one argument', async (spec) => {
    const r = await install(spec);
    expect(r.status, r.stderr).toBe(0);
    expect(r.npm).toBe(`install --global --no-audit --no-fund ${spec}`);
  });
});
