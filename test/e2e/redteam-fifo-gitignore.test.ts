import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { scanWorkspace, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 10, deliverables 5 and 6): git opens every .gitignore and .gitattributes it meets
 * in the work tree with a blocking open(). A command (for example the repository's own test, run by
 * an allowed `node --test`) makes `src/.gitignore` a FIFO. Then every git that walks the workspace
 * blocks forever: the daemon's `changes` (baseline `git add -A`) until its timeout, and the
 * orchestrator's root scan (`ls-files --others --exclude-standard` through docker exec) until its
 * 600 s timeout, after every call that can change the workspace. Reproduced through the real CLI:
 * the example repository plus a test file doing `mkfifo src/.gitignore`, the example policy,
 * `--on-ask deny --apply`: after the allowed `node --test` the next call waited exactly 600 s, and
 * the scan's root git processes were still in the container afterwards (the timeout drops the
 * stream, not the process).
 */
describe('red team: a FIFO named .gitignore stalls every git that walks the workspace', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
    await sh(sandbox, 'mkfifo src/.gitignore && echo changed >> README.md');
  });
  afterAll(async () => driver?.close());

  it("the daemon's changes still answers", async () => {
    const r = await run(sandbox, 'changes', {}, { timeoutMs: 15_000 });
    expect(r.status, r.error?.message).toBe('ok');
    expect(r.filesChanged).toContain('README.md');
  });

  it("the orchestrator's root scan still answers, and leaves no git behind", async () => {
    const container = driver.docker.getContainer(sandbox.info.containerId);
    let listed: string[] = [];
    let failure = '';
    try {
      listed = (await scanWorkspace(container, '', 15_000)).changes.map((c) => c.path);
    } catch (e) {
      failure = String(e);
    }
    expect(failure).toBe('');
    expect(listed).toContain('README.md');
    const left = await rootExec(driver, sandbox, [
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep "^/usr/bin/git\\|^git ' +
        '" || true',
    ]);
    expect(left.output.trim()).toBe('');
  });
});
