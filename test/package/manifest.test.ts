import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALLOWED_IN_TARBALL, REQUIRED_IN_TARBALL } from '../support/package';

/**
 * The published package is the repository root (docs/decisions/0007-published-package.md). What
 * `npm pack` would put in it is checked here without Docker or the network; tarball-install.test.ts
 * installs the real tarball and runs it.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const manifest = (file: string) =>
  JSON.parse(readFileSync(path.join(root, file), 'utf8')) as {
    name: string;
    version: string;
    private?: boolean;
    bin?: Record<string, string>;
    files?: string[];
    engines?: Record<string, string>;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
  };
const rootManifest = manifest('package.json');

describe('the root package.json (the published package)', () => {
  it('is publishable: not private, a version, a `gatehouse` bin, a files list, Node >= 20.19, built on prepack', () => {
    expect(rootManifest.private).toBeUndefined();
    expect(rootManifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(rootManifest.bin).toEqual({ gatehouse: 'orchestrator/bin/gatehouse.mjs' });
    expect(readFileSync(path.join(root, 'orchestrator/bin/gatehouse.mjs'), 'utf8')).toMatch(
      /^#!\/usr\/bin\/env node\n/,
    );
    expect(rootManifest.files).toEqual(expect.arrayContaining(['orchestrator/dist/gatehouse.mjs', 'images/']));
    expect(rootManifest.engines?.node).toBe('>=20.19');
    expect(rootManifest.scripts.prepack).toBe('node scripts/build.mjs');
  });

  // scripts/build.mjs leaves these external in the CLI bundle, so the install must bring each of them.
  it("depends on exactly the orchestrator's npm dependencies, at the same ranges", () => {
    const orchestrator = Object.entries(manifest('orchestrator/package.json').dependencies).filter(
      ([name]) => !name.startsWith('@gatehouse/'),
    );
    expect(rootManifest.dependencies).toEqual(Object.fromEntries(orchestrator));
  });

  it('packs only what runs: no sources, tests or docs beyond the README', () => {
    // --ignore-scripts: the bundles were built by the test run's global setup; this only lists.
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const [pack] = JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }>; unpackedSize: number }>;
    const files = pack!.files.map((f) => f.path);
    expect(files.filter((f) => !ALLOWED_IN_TARBALL.some((re) => re.test(f)))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining([...REQUIRED_IN_TARBALL]));
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(pack!.unpackedSize).toBeLessThan(5 * 1024 * 1024);
  });
});
