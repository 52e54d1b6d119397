import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Approvals over NATS end to end: a live headless run whose policy lists approver keys publishes
 * its request; a second process (as a web page or bot would) signs and sends answers. A forged
 * answer is refused and recorded; the listed key's grant lets the command run, once.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
type Event = { type: string; data: Record<string, unknown>; runId: string; actor: string; id: string };

function gatehouse(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, CI: 'true' },
    input: '',
  });
}

/**
 * Starts a live headless run whose policy (given with --policy: approvers are trusted only from
 * there) lists `approvers`, and resolves with its first approval request.
 */
function startLive(tmp: string, approvers: Array<{ name: string; publicKey: string }>, script: unknown) {
  const repo = path.join(tmp, 'repo');
  mkdirSync(path.join(repo, '.gatehouse'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# x\n');
  writeFileSync(
    path.join(repo, '.gatehouse/policy.json'),
    JSON.stringify({ mode: 'sandboxed-auto', ask: ['bash(echo ran*)'], approvers }),
  );
  const scriptFile = path.join(tmp, 'script.json');
  writeFileSync(scriptFile, JSON.stringify(script));
  const stateDir = path.join(tmp, 'state');
  const child = spawn(
    process.execPath,
    [
      cli,
      'run',
      'x',
      '--repo',
      repo,
      '--policy',
      path.join(repo, '.gatehouse/policy.json'),
      '--model',
      `scripted:${scriptFile}`,
      '--json',
      '--state-dir',
      stateDir,
      '--approval-wait',
      '60',
    ],
    { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const requested = new Promise<Event>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      const e = JSON.parse(l) as Event;
      if (e.type === 'approval.requested') resolve(e);
    });
    child.on('close', () => reject(new Error('the run ended before asking')));
  });
  const stop = (): void => {
    clearTimeout(killer);
    child.kill('SIGKILL');
  };
  return { stateDir, exited, requested, stop };
}

describe('approvals over NATS (real CLI, real NATS server, real sandbox)', () => {
  it(
    'a signed answer from a listed approver is accepted; a forged one is refused and recorded; the command ' +
      'runs once',
    async () => {
      const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-nats-appr-'));
      const keygen = (name: string) => {
        const r = gatehouse(['approver', 'keygen', name, '--out', path.join(tmp, `${name}.key`)]);
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as { name: string; publicKey: string };
      };
      const alice = keygen('alice');
      keygen('mallory'); // a valid key, but not in the policy
      const live = startLive(tmp, [alice], {
        turns: [
          { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
          { final: 'done (obs-1)' },
        ],
      });
      const { stateDir, exited } = live;
      try {
        const requested = await live.requested;
        const runId = requested.runId;
        const requestId = String(requested.data.requestId);

        const forged = gatehouse(['approve', runId, requestId, '--nats', '--key', path.join(tmp, 'mallory.key')]);
        expect(forged.status).toBe(1);
        expect(JSON.parse(forged.stdout)).toMatchObject({ ok: false });
        expect(forged.stdout).toMatch(/is not an approver of this run/);

        const ok = gatehouse([
          'approve',
          runId,
          requestId,
          '--nats',
          '--key',
          path.join(tmp, 'alice.key'),
          '--reason',
          'looks right',
        ]);
        expect(ok.status, ok.stderr + ok.stdout).toBe(0);
        expect(await exited).toBe(0);

        const log = readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Event);
        expect(log.find((e) => e.type === 'approval.rejected')!.data).toMatchObject({ requestId, channel: 'nats' });
        const grant = log.find((e) => e.type === 'approval.granted')!;
        expect(grant).toMatchObject({
          actor: 'user',
          data: { channel: 'nats', approver: `nats:alice:${alice.publicKey}`, reason: 'looks right' },
        });
        const runs = log.filter((e) => e.type === 'tool.execution.started');
        expect(runs).toHaveLength(1);
        expect(runs[0]!.data.approvalId).toBe(grant.id);
        expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      } finally {
        live.stop();
      }
    },
  );

  it(
    "a sub-agent's ask goes out on its root run's subjects, labelled with the lineage, and a listed approver " +
      'answers it',
    async () => {
      const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-nats-child-'));
      const keygen = gatehouse(['approver', 'keygen', 'alice', '--out', path.join(tmp, 'alice.key')]);
      const alice = JSON.parse(keygen.stdout) as { name: string; publicKey: string };
      const handoff = {
        task: 'record',
        tools: ['bash'],
        paths: ['**'],
        evidence: [],
        budget: { turns: 3, toolCalls: 3, tokens: 100000, seconds: 120 },
        expect: 'done',
      };
      const live = startLive(tmp, [alice], {
        turns: [{ toolCalls: [{ name: 'delegate', input: handoff }] }, { final: 'recorded (obs-3)' }],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
              { final: 'ok (obs-1)' },
            ],
          },
        ],
      });
      const { stateDir, exited } = live;
      try {
        const requested = await live.requested;
        const rootId = String((requested.data.lineage as string[])[0]);
        expect(requested.runId).not.toBe(rootId);
        expect(requested.data.lineage).toEqual([rootId, requested.runId]);
        const ok = gatehouse([
          'approve',
          rootId,
          String(requested.data.requestId),
          '--nats',
          '--key',
          path.join(tmp, 'alice.key'),
        ]);
        expect(ok.status, ok.stderr + ok.stdout).toBe(0);
        expect(await exited).toBe(0);
        const childLog = readFileSync(path.join(stateDir, 'runs', requested.runId, 'events.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Event);
        expect(childLog.find((e) => e.type === 'approval.granted')!.data).toMatchObject({
          channel: 'nats',
          approver: `nats:alice:${alice.publicKey}`,
        });
        expect(childLog.filter((e) => e.type === 'tool.execution.started')).toHaveLength(1);
      } finally {
        live.stop();
      }
    },
  );
});
