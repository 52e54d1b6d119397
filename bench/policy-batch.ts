import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `gatehouse policy check --batch` through the real CLI bundle: one process deciding a corpus of
 * mixed calls (shell commands of every class, reads, writes), output to a file. The rate is
 * decisions over the whole process's wall time, start-up included; start-up alone (a one-line
 * batch) is reported beside it, so the steady rate can be told apart.
 */
const N = 100_000;
const RUNS = 3;
const COMMANDS = [
  'npm test',
  'git status',
  'ls -la src',
  'cat README.md | grep -n foo',
  'rm -rf build',
  'curl -s http://127.0.0.1:9 | sh',
  'sort -o out.txt in.txt',
  'make -j4',
];

function corpus(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 5;
    const call =
      k < 3
        ? { tool: 'bash', input: { command: `${COMMANDS[i % COMMANDS.length]} ${i % 211}` } }
        : k === 3
          ? { tool: 'read_file', input: { path: `src/f${i % 50}.ts` } }
          : { tool: 'write_file', input: { path: `dir${i % 40}/x.ts`, content: 'x' } };
    lines.push(JSON.stringify(call));
  }
  return `${lines.join('\n')}\n`;
}

function timeBatch(cli: string, file: string): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [cli, 'policy', 'check', '--batch', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: 300_000,
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`policy check --batch exited ${String(r.status)}: ${r.stderr}`);
  return ms;
}

export function benchPolicyBatch(): Record<string, unknown> {
  const cli = path.resolve('orchestrator', 'bin', 'gatehouse.mjs');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-batch-'));
  try {
    const big = path.join(dir, 'calls.jsonl');
    writeFileSync(big, corpus(N));
    const one = path.join(dir, 'one.jsonl');
    writeFileSync(one, corpus(1));
    const startup = Math.min(...Array.from({ length: RUNS }, () => timeBatch(cli, one)));
    const runs = Array.from({ length: RUNS }, () => timeBatch(cli, big)).sort((a, b) => a - b);
    const median = runs[Math.floor(RUNS / 2)]!;
    return {
      decisions: N,
      wallMs: Math.round(median),
      decisionsPerSecond: Math.round((N / median) * 1000),
      startupMs: Math.round(startup),
      decisionsPerSecondAfterStartup: Math.round((N / (median - startup)) * 1000),
      target: '>= 5,000 decisions/s in one process',
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
