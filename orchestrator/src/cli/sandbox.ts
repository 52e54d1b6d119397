import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { createLogger } from './logger';
import { runtimeApproval } from '../approval/runtime-approval';
import { reapOrphans, SandboxDriver, type Sandbox } from '../sandbox/index';

const say = (m: string): boolean => process.stderr.write(`${m}\n`);

/** Runs one primitive with a runtime approval; the smoke test is the runtime's own check. */
async function run<P extends Parameters<Sandbox['invoke']>[0]>(
  s: Sandbox,
  primitive: P,
  input: Parameters<Sandbox['invoke']>[1] & object,
) {
  const started = performance.now();
  const result = await s.invoke(primitive, input as never, { approval: runtimeApproval(primitive, input, 'smoke') });
  return { result, ms: Math.round((performance.now() - started) * 10) / 10 };
}

export async function smoke(repo: string, json: boolean): Promise<number> {
  const repoDir = path.resolve(repo);
  const driver = await SandboxDriver.start({ log: createLogger() });
  try {
    const sandbox = await driver.createSandbox({ runId: newId('run'), repoDir });
    const report: Record<string, unknown> = { sandbox: sandbox.info };
    if (!json)
      say(
        `sandbox ${sandbox.sandboxId} ready in ${sandbox.info.timings.total} ms ` +
          `(${JSON.stringify(sandbox.info.timings)})`,
      );
    const steps = [
      await run(sandbox, 'list', { path: '.' }),
      await run(sandbox, 'exec', {
        command:
          'echo "uid $(id -u), node $(node --version)"; if git rev-parse --git-dir >/dev/null 2>&1; then git status ' +
          '--short | head -5; fi',
      }),
      await run(sandbox, 'write_file', {
        path: 'GATEHOUSE_SMOKE.txt',
        content: 'written inside the sandbox\n',
        expectedSha256: null,
      }),
      await run(sandbox, 'read_file', { path: 'GATEHOUSE_SMOKE.txt' }),
    ];
    const changes = await sandbox.changes();
    report.steps = steps.map(({ result, ms }) => ({
      primitive: result.primitive,
      status: result.status,
      exitCode: result.exitCode,
      ms,
      output: result.output.slice(0, 400),
    }));
    report.changes = changes;
    const ok =
      steps.every((s) => s.result.status === 'ok') && changes.files.some((f) => f.path === 'GATEHOUSE_SMOKE.txt');
    report.ok = ok;
    if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      for (const { result, ms } of steps)
        say(
          `  ${result.primitive?.padEnd(10)} ${result.status.padEnd(7)} ${String(ms).padStart(7)} ms  ` +
            `${result.output.trim().split('\n').slice(0, 3).join(' | ').slice(0, 100)}`,
        );
      say(`changes: ${changes.files.map((f) => `${f.status} ${f.path}`).join(', ')}`);
      say(changes.diff.trimEnd());
      say(ok ? 'smoke: ok (the repository on the host is untouched)' : 'smoke: FAILED');
    }
    return ok ? 0 : 1;
  } finally {
    await driver.close();
  }
}

/** Starts a sandbox and holds it: used to inspect one by hand, and by the reaper tests. */
export async function sandboxUp(repo?: string): Promise<void> {
  const driver = await SandboxDriver.start({ log: createLogger() });
  const sandbox = await driver.createSandbox({ runId: newId('run'), ...(repo ? { repoDir: path.resolve(repo) } : {}) });
  process.stdout.write(`${JSON.stringify({ ...sandbox.info, pid: process.pid })}\n`);
  const stop = (): void => {
    void driver.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await new Promise(() => undefined);
}

export async function reap(all: boolean, runId?: string): Promise<void> {
  const report = await reapOrphans(undefined, all, runId ? { runId } : {});
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
