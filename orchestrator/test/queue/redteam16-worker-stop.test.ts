import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * Red team (issue 16), a stale worker: SIGSTOP a worker for longer than its lease TTL. Its lease
 * runs out and another worker takes the run over, but a stopped worker's pipe to its run child
 * stays open, so before the fix the child went on executing steps with no lease behind it (the
 * store's fencing only stops it at its next append, after the new holder's first). The worker
 * now beats on the link; a child that hears nothing for the link's deadline (below the TTL) kills
 * itself, as it does when the worker dies.
 *
 * Real processes: the worker's startRunChild and the CLI's watchWorkerLink, bundled as they are.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const out = mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-link-'));
const workerJs = path.join(out, 'worker.mjs');
const childJs = path.join(out, 'child.mjs');
const started: ChildProcess[] = [];
const pids: number[] = [];

beforeAll(async () => {
  for (const [from, to] of [
    ['rt16-link-worker.ts', workerJs],
    ['rt16-link-child.ts', childJs],
  ] as const)
    await build({
      entryPoints: [path.join(here, 'fixtures', from)],
      outfile: to,
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
}, 60_000);

afterEach(() => {
  for (const p of started.splice(0)) {
    if (p.pid !== undefined) {
      // Bounded cleanup of what this test started: continue a stopped worker so it can die.
      try {
        process.kill(p.pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    p.kill('SIGKILL');
  }
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** Running (a dead child of a stopped worker stays a zombie until its parent runs again: that is dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function workerWithChild(
  linkMs: number,
  env: NodeJS.ProcessEnv = {},
): Promise<{ worker: ChildProcess; childPid: number }> {
  const worker = spawn(process.execPath, [workerJs, childJs, String(linkMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  started.push(worker);
  const first = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('the worker printed no child pid in 10 s')), 10_000);
    createInterface({ input: worker.stdout }).once('line', (l) => {
      clearTimeout(t);
      resolve(l);
    });
  });
  const childPid = Number(first);
  pids.push(childPid);
  return { worker, childPid };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return !alive(pid);
}

describe('redteam16: a run child whose worker is stopped (SIGSTOP) past its lease', () => {
  it('lives on while its worker lives and beats, well past the link deadline', async () => {
    const { childPid } = await workerWithChild(600);
    await sleep(2500);
    expect(alive(childPid)).toBe(true);
  }, 20_000);

  it('lives on after its own event loop was blocked past the deadline while its worker kept beating', async () => {
    // The beats wait in the pipe while the child is busy; the expired deadline must read them first.
    const { childPid } = await workerWithChild(600, { RT16_BLOCK_MS: '2000' });
    await sleep(3500);
    expect(alive(childPid)).toBe(true);
  }, 20_000);

  it('kills itself within the link deadline once its worker stops, before a lease TTL could pass', async () => {
    const linkMs = 600;
    const { worker, childPid } = await workerWithChild(linkMs);
    await sleep(500);
    expect(alive(childPid)).toBe(true);
    process.kill(worker.pid!, 'SIGSTOP');
    // The worker's lease TTL is twice the link deadline: the child is gone well before it runs out.
    expect(await gone(childPid, 2 * linkMs)).toBe(true);
  }, 20_000);

  it('kills itself at once when its worker dies (SIGKILL), as before', async () => {
    const { worker, childPid } = await workerWithChild(60_000);
    worker.kill('SIGKILL');
    expect(await gone(childPid, 3000)).toBe(true);
  }, 20_000);
});
