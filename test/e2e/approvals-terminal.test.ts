import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The terminal prompt through a real pseudo-terminal (util-linux `script`), the real CLI and a
 * real sandbox: the person sees the command, the rule and the risk, and answers with a key.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
type Event = { type: string; data: Record<string, unknown>; actor: string; id: string };

function setup(): { repo: string; script: string; stateDir: string } {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-tty-'));
  const repo = path.join(tmp, 'repo');
  mkdirSync(path.join(repo, '.gatehouse'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# tty\n');
  writeFileSync(
    path.join(repo, '.gatehouse/policy.json'),
    JSON.stringify({ mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo ran*)', reason: 'writes the run log' }] }),
  );
  const script = path.join(tmp, 'script.json');
  const call = { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] };
  writeFileSync(script, JSON.stringify({ turns: [call, call, { final: 'done (obs-1, obs-2)' }] }));
  return { repo, script, stateDir: path.join(tmp, 'state') };
}

/** Runs the CLI on a pty; each answer is typed once its cue has appeared on screen (in order). */
async function onTerminal(
  args: string[],
  script: Array<[cue: string, keys: string]>,
): Promise<{ code: number | null; screen: string }> {
  const env = { ...process.env };
  delete env.CI;
  const command = [process.execPath, cli, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let next = 0;
  let searchFrom = 0;
  const onData = (chunk: Buffer): void => {
    screen += chunk.toString('utf8');
    while (next < script.length) {
      const [cue, keys] = script[next]!;
      const at = screen.indexOf(cue, searchFrom);
      if (at < 0) break;
      searchFrom = at + cue.length;
      // The prompt ignores keys typed within 250 ms of a question appearing (typed-ahead input
      // must not answer a question the person has not seen), so a person's pause comes first.
      setTimeout(() => child.stdin.write(keys), 600);
      next++;
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // Well inside the test's own timeout, so a stuck prompt never outlives the test.
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, screen };
}

const logOf = (stateDir: string): Event[] => {
  const [run] = readdirSync(path.join(stateDir, 'runs'));
  return readFileSync(path.join(stateDir, 'runs', run!, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Event);
};

describe('the terminal prompt (real pty, real CLI, real sandbox)', () => {
  it(
    'shows the command, rule, reason and risk; ' + '"approve for this run" is not asked again for the same action',
    async () => {
      const s = setup();
      const r = await onTerminal(
        ['run', 'x', '--repo', s.repo, '--model', `scripted:${s.script}`, '--state-dir', s.stateDir],
        [['[o] approve once', 'r\r']],
      );
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).toContain('echo ran >> ran.log');
      expect(r.screen).toContain('ask[0] bash(echo ran*)');
      expect(r.screen).toContain('writes the run log');
      expect(r.screen).toContain('write: > ran.log');
      expect(r.screen.split('[o] approve once').length - 1).toBe(1);
      const log = logOf(s.stateDir);
      const grants = log.filter((e) => e.type === 'approval.granted');
      expect(grants).toHaveLength(1);
      expect(grants[0]!.data).toMatchObject({
        channel: 'terminal',
        scope: 'run',
        approver: expect.stringMatching(/^user:/) as unknown,
      });
      const runs = log.filter((e) => e.type === 'tool.execution.started');
      expect(runs.map((e) => e.data.approvalId)).toEqual([grants[0]!.id, grants[0]!.id]);
    },
  );

  it(
    'deny with a reason: the reason reaches the model; ' + '"approve once" asks again for the next identical call',
    async () => {
      const s = setup();
      const r = await onTerminal(
        ['run', 'x', '--repo', s.repo, '--model', `scripted:${s.script}`, '--state-dir', s.stateDir],
        [
          ['[o] approve once', 'd\r'],
          ['reason', 'use the fixture\r'],
          ['[o] approve once', 'o\r'],
        ],
      );
      expect(r.code, r.screen).toBe(0);
      const log = logOf(s.stateDir);
      expect(log.find((e) => e.type === 'approval.denied')!.data).toMatchObject({
        channel: 'terminal',
        reason: 'use the fixture',
      });
      const observations = log.filter((e) => e.type === 'tool.observation');
      expect(observations[0]!.data.outcome).toBe('denied');
      expect(String(observations[0]!.data.content)).toContain('use the fixture');
      expect(log.find((e) => e.type === 'approval.granted')!.data).toMatchObject({
        channel: 'terminal',
        scope: 'once',
      });
      expect(observations[1]!.data.outcome).toBe('ok');
    },
  );
});
