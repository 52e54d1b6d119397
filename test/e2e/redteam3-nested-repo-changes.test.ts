import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import type { SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

/**
 * Red team 3, against the fix for `git init sub` (baseline.ts: `git add -A --ignore-errors`, the
 * "does not have a commit checked out" error accepted). The daemon's `changes` hashes the workspace
 * into a fresh index each time, so a folder that was part of the baseline and now holds a `.git`
 * is taken for a nested repository: with no commit its files are left out of the tree, with a
 * commit it becomes a gitlink. Either way every baseline file in it reads as deleted, and a real
 * edit in it vanishes. Delegation (agents/child-run.ts, through loop/workspace.ts) passes this list
 * on: the parent is asked to `rm -f` files the child never removed, and the child's edit is lost.
 */
const FILES = { 'README.md': '# fixture\n', 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 2;\n' };

describe('red team 3: a .git made in a folder of the baseline hides its changes', () => {
  let driver: SandboxDriver;
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => driver?.close());

  async function changedAfter(command: string) {
    const sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo(FILES) });
    await sh(sandbox, command);
    const r = await run(sandbox, 'changes', {}, { timeoutMs: 30_000 });
    expect(r.status, r.error?.message).toBe('ok');
    return r.data?.kind === 'changes' ? r.data.files : [];
  }

  it('an empty repository made in src/ neither hides an edit nor makes untouched files look deleted', async () => {
    const files = await changedAfter('echo "export const a = 42;" > src/a.ts && git init -q src');
    expect(files).toContainEqual({ path: 'src/a.ts', status: 'modified' });
    expect(files.filter((f) => f.status === 'deleted')).toEqual([]);
  });

  it(
    'a repository with a commit made in src/ neither ' + 'hides an edit nor makes untouched files look deleted',
    async () => {
      const files = await changedAfter(
        'git init -q src && git -C src -c user.email=t@t -c user.name=t commit -q --allow-empty -m x && echo "export ' +
          'const a = 42;" > src/a.ts',
      );
      expect(files).toContainEqual({ path: 'src/a.ts', status: 'modified' });
      expect(files.filter((f) => f.status === 'deleted')).toEqual([]);
    },
  );
});
