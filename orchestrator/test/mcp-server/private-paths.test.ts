import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowedPath } from '../../src/mcp-server/allowed-path';

/**
 * Red team (issue 17): a server started in the home folder without --root accepts the whole home.
 * A caller that names the folder holding the log key (or the state directory, or a folder above
 * them) as its repository gets them copied into the sandbox, and the key back in the answer: with
 * it, memory records and logs can be forged. Those folders are never a repository or a config.
 */
describe("allowedPath: gatehouse's own key and state are never handed to a run", () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-home-'));
  const keyDir = path.join(home, '.config', 'gatehouse');
  const stateDir = path.join(home, '.local', 'state', 'gatehouse');
  mkdirSync(keyDir, { recursive: true });
  mkdirSync(path.join(stateDir, 'memory'), { recursive: true });
  writeFileSync(path.join(keyDir, 'log.key'), 'secret\n');
  writeFileSync(path.join(stateDir, 'memory', 'x.json'), '{}\n');
  mkdirSync(path.join(home, 'src', 'app'), { recursive: true });
  const privatePaths = [path.join(keyDir, 'log.key'), path.join(keyDir, 'heads'), stateDir];

  it('refuses the key folder, the state directory, a folder above them, or a file inside them', () => {
    for (const repo of [keyDir, path.join(home, '.config'), home, stateDir, path.join(stateDir, 'memory')])
      expect(() => allowedPath(repo, [home], 'repository', privatePaths)).toThrow(/holds gatehouse's own/);
    expect(() => allowedPath(path.join(keyDir, 'log.key'), [home], 'config', privatePaths)).toThrow(
      /holds gatehouse's own/,
    );
    expect(() => allowedPath(path.join(stateDir, 'memory', 'x.json'), [home], 'config', privatePaths)).toThrow(
      /holds gatehouse's own/,
    );
  });

  it('still accepts a repository beside them', () => {
    expect(allowedPath(path.join(home, 'src', 'app'), [home], 'repository', privatePaths)).toBe(
      path.join(home, 'src', 'app'),
    );
  });
});
