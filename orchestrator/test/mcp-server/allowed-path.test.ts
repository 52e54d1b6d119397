import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowedPath } from '../../src/mcp-server/allowed-path';

describe('allowedPath: repositories and configs only inside the roots', () => {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-root-')));
  const outside = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-out-')));
  mkdirSync(path.join(root, 'repo'));
  writeFileSync(path.join(root, 'config.json'), '{}');
  symlinkSync(outside, path.join(root, 'escape'));
  mkdirSync(`${root}-sibling`, { recursive: true });

  it('accepts a folder or file inside a root, by its real path', () => {
    expect(allowedPath(path.join(root, 'repo'), [root], 'repository')).toBe(path.join(root, 'repo'));
    expect(allowedPath(path.join(root, 'repo', '..', 'config.json'), [root], 'config')).toBe(
      path.join(root, 'config.json'),
    );
  });

  it('refuses relative paths, paths outside, links that lead out, a sibling sharing the prefix', () => {
    expect(() => allowedPath('repo', [root], 'repository')).toThrow(/not an absolute path/);
    expect(() => allowedPath(outside, [root], 'repository')).toThrow(/outside the folders/);
    expect(() => allowedPath(path.join(root, 'escape'), [root], 'repository')).toThrow(/outside the folders/);
    expect(() => allowedPath(`${root}-sibling`, [root], 'repository')).toThrow(/outside the folders/);
    expect(() => allowedPath(path.join(root, 'config.json'), [root], 'repository')).toThrow(/not a folder/);
    expect(() => allowedPath(path.join(root, 'repo'), [root], 'config')).toThrow(/not a regular file/);
    expect(() => allowedPath(path.join(root, 'missing'), [root], 'repository')).toThrow(/no such repository/);
  });
});
