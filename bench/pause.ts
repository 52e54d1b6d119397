import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { summarize } from './stats';

/**
 * How fast a headless run that hits an ask gets out of the way: from the moment its
 * `approval.requested` event is written to the moment the process has exited with code 3
 * (the workspace is saved and the sandbox removed in between). Also the whole CLI run, for scale.
 */
export async function benchPause(runs = 5): Promise<Record<string, unknown>> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-pause-'));
  const repo = path.join(tmp, 'repo');
  mkdirSync(path.join(repo, '.gatehouse'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# bench\n');
  writeFileSync(path.join(repo, '.gatehouse/policy.json'), JSON.stringify({ mode: 'confirm-each' }));
  const script = path.join(tmp, 'script.json');
  writeFileSync(
    script,
    JSON.stringify({ turns: [{ toolCalls: [{ name: 'bash', input: { command: 'echo hi >> x.log' } }] }] }),
  );
  const askToExit: number[] = [];
  const total: number[] = [];
  const codes: Array<number | null> = [];
  for (let i = 0; i < runs; i++) {
    const t0 = Date.now();
    let requestedAt = 0;
    const child = spawn(
      process.execPath,
      [
        'orchestrator/bin/gatehouse.mjs',
        'run',
        'x',
        '--repo',
        repo,
        '--model',
        `scripted:${script}`,
        '--json',
        '--state-dir',
        path.join(tmp, 'state'),
      ],
      { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (!requestedAt && buffer.includes('"type":"approval.requested"')) requestedAt = Date.now();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    const end = Date.now();
    codes.push(code);
    total.push(end - t0);
    if (requestedAt) askToExit.push(end - requestedAt);
  }
  return {
    runs,
    exitCodes: codes,
    askToExitMs: summarize(askToExit),
    wholeRunMs: summarize(total),
    target: 'a headless ask exits 3 within 1 s',
  };
}
