import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allowedPath } from '../../src/mcp-server/allowed-path';
import { checkRepositoryPin, repositoryPin } from '../../src/mcp-server/repository-pin';
import { runArgs } from '../../src/mcp-server/run-args';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');

/**
 * Issue 17: mcp serve checks that a repository's real path is inside a --root, then the run uses
 * it. A caller who swaps a folder on that path for a symbolic link in between (to a folder outside
 * the roots) must find the run refused, not pointed at the link's target.
 */
describe("mcp serve's repository check holds until the run starts", () => {
  /** ROOT/projects/repo inside the server's root, and OUTSIDE/projects/repo beside it (a secret). */
  function layout() {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-pin-')));
    const serverRoot = path.join(base, 'root');
    const outside = path.join(base, 'outside');
    for (const top of [serverRoot, outside]) {
      mkdirSync(path.join(top, 'projects', 'repo'), { recursive: true });
      writeFileSync(path.join(top, 'projects', 'repo', 'README.md'), top === outside ? 'secret\n' : '# mine\n');
    }
    return { base, serverRoot, outside, repo: path.join(serverRoot, 'projects', 'repo') };
  }

  it('a folder on the path swapped for a link after the check is refused', () => {
    const l = layout();
    const checked = allowedPath(l.repo, [l.serverRoot], 'repository');
    const pin = repositoryPin(checked);
    expect(() => checkRepositoryPin(checked, pin)).not.toThrow();
    // The swap: ROOT/projects becomes a link to OUTSIDE/projects. The same path now reaches the secret.
    renameSync(path.join(l.serverRoot, 'projects'), path.join(l.base, 'moved'));
    symlinkSync(path.join(l.outside, 'projects'), path.join(l.serverRoot, 'projects'));
    expect(() => checkRepositoryPin(checked, pin)).toThrow(
      /changed after the server checked it \(a symbolic link on its path now leads to .*outside\/projects\/repo\)/,
    );
  });

  it('the repository itself replaced by another folder at the same path is refused', () => {
    const l = layout();
    const pin = repositoryPin(allowedPath(l.repo, [l.serverRoot], 'repository'));
    renameSync(l.repo, path.join(l.base, 'old-repo'));
    mkdirSync(l.repo);
    expect(() => checkRepositoryPin(l.repo, pin)).toThrow(/another folder is there now/);
  });

  it(
    "the run's child gets the real path and the pin, and refuses a swapped path before reading anything",
    { timeout: 120_000 },
    () => {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
      const l = layout();
      const checked = allowedPath(l.repo, [l.serverRoot], 'repository');
      const pin = repositoryPin(checked);
      const args = runArgs({
        task: 't',
        repoDir: checked,
        repoPin: pin,
        policyFile: path.join(l.base, 'policy.json'),
        stateDir: path.join(l.base, 'state'),
        runId: 'run_pin',
        model: `scripted:${path.join(l.base, 'script.json')}`,
      });
      expect(args.slice(args.indexOf('--repo'), args.indexOf('--repo') + 4)).toEqual([
        '--repo',
        checked,
        '--repo-pin',
        pin,
      ]);
      renameSync(path.join(l.serverRoot, 'projects'), path.join(l.base, 'moved'));
      symlinkSync(path.join(l.outside, 'projects'), path.join(l.serverRoot, 'projects'));
      const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toMatch(/the repository .* changed after the server checked it/);
      expect(r.status).toBe(1);
    },
  );
});
