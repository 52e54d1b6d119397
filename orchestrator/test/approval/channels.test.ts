import os from 'node:os';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { actionHash } from '@gatehouse/shared';
import {
  headlessChannel,
  previewOf,
  terminalChannel,
  type ApprovalAnswer,
  type ApprovalPrompt,
} from '../../src/approval/channels/index';

function prompt(over: Partial<ApprovalPrompt> = {}): ApprovalPrompt {
  const input = { command: 'git commit -m "wip"' };
  return {
    runId: 'run_a',
    requestId: 'req_1',
    tool: 'bash',
    input,
    actionHash: actionHash({ name: 'bash', input }),
    rule: 'ask: bash(git commit*)',
    reason: 'git commit changes the repository history',
    risk: ['write: git commit'],
    preview: 'git commit -m "wip"',
    lineage: ['run_a'],
    ...over,
  };
}

/** A terminal channel on in-memory streams, and what it printed so far. */
function terminal(approver: string | null = 'alice') {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (c: Buffer) => (printed += c.toString('utf8')));
  const channel = terminalChannel({ input, output, ...(approver === null ? {} : { approver }) });
  const count = (needle: string) => printed.split(needle).length - 1;
  return {
    channel,
    input,
    printed: () => printed,
    type: (text: string) => input.write(text),
    /** Waits (bounded) until `needle` has been printed at least `times` times. */
    waitFor: (needle: string, times = 1) =>
      vi.waitFor(() => expect(count(needle)).toBeGreaterThanOrEqual(times), { timeout: 2_000, interval: 5 }),
  };
}

const MENU = '[o] approve once  [r] approve for this run  [d] deny';
const never = () => new AbortController().signal;

describe('terminal channel', () => {
  it('approves once', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('o\n');
    expect(await answer).toEqual({ decision: 'grant', scope: 'once', approver: 'user:alice', channel: 'terminal' });
    await t.channel.close?.();
  });

  it('approves for the run', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('R\n');
    expect(await answer).toMatchObject({ decision: 'grant', scope: 'run', channel: 'terminal' });
    await t.channel.close?.();
  });

  it('denies with the reason typed, or a default when none is', async () => {
    const t = terminal();
    const first = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('d\n');
    await t.waitFor('reason (optional');
    t.type('  touches the release branch \n');
    expect(await first).toEqual({
      decision: 'deny',
      approver: 'user:alice',
      channel: 'terminal',
      reason: 'touches the release branch',
    });

    const second = t.channel.ask(prompt({ requestId: 'req_2' }), never());
    await t.waitFor(MENU, 2);
    t.type('d\n\n'); // both lines in one chunk: the reason line must not be lost
    expect(await second).toMatchObject({ decision: 'deny', reason: 'denied by the user' });
    await t.channel.close?.();
  });

  it('re-asks on invalid answers, then takes a valid one', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('x\nyes\n\n');
    await t.waitFor('please answer', 3);
    t.type('o\n');
    expect(await answer).toMatchObject({ decision: 'grant', scope: 'once' });
    expect(t.printed()).toContain('[3/5]');
    await t.channel.close?.();
  });

  it('denies after five invalid answers, saying why', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('a\nb\nc\ne\nf\no\n'); // the sixth line comes too late to count
    const got = await answer;
    expect(got).toMatchObject({ decision: 'deny', approver: 'user:alice', channel: 'terminal' });
    expect(got.reason).toMatch(/no valid answer after 5 attempts/);
    await t.channel.close?.();
  });

  it('denies when the input closes (Ctrl-D, closed stdin), now and for later asks', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.input.end();
    expect(await answer).toEqual({
      decision: 'deny',
      approver: 'user:alice',
      channel: 'terminal',
      reason: 'no answer (input closed)',
    });
    expect(await t.channel.ask(prompt({ requestId: 'req_2' }), never())).toMatchObject({
      decision: 'deny',
      reason: 'no answer (input closed)',
    });
  });

  it('keeps the denial when the input closes while asking for the reason', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('d\n');
    await t.waitFor('reason (optional');
    t.input.end();
    expect(await answer).toMatchObject({ decision: 'deny', reason: 'denied by the user' });
  });

  it('serializes concurrent asks: the second is printed only after the first is answered', async () => {
    const t = terminal();
    const a = t.channel.ask(prompt({ requestId: 'req_a', preview: 'echo first' }), never());
    const b = t.channel.ask(prompt({ requestId: 'req_b', preview: 'echo second' }), never());
    await t.waitFor(MENU);
    await new Promise((r) => setTimeout(r, 50));
    expect(t.printed()).toContain('req_a');
    expect(t.printed()).not.toContain('req_b');
    t.type('o\n');
    expect(await a).toMatchObject({ decision: 'grant', scope: 'once' });
    await t.waitFor(MENU, 2);
    expect(t.printed()).toContain('echo second');
    t.type('r\n');
    expect(await b).toMatchObject({ decision: 'grant', scope: 'run' });
    await t.channel.close?.();
  });

  it('does not let a line typed before a question answer it', async () => {
    const t = terminal();
    const first = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('o\n');
    await first;
    t.type('o\n'); // typed ahead, with nothing on screen
    await new Promise((r) => setTimeout(r, 20));
    const second = t.channel.ask(prompt({ requestId: 'req_2' }), never());
    await t.waitFor(MENU, 2);
    const settled = await Promise.race([second.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);
    expect(settled).toBe(false);
    t.type('r\n');
    expect(await second).toMatchObject({ decision: 'grant', scope: 'run' });
    await t.channel.close?.();
  });

  it(
    'on a TTY, ignores a line that arrives as the ' + 'question is shown (typed ahead into the kernel buffer)',
    async () => {
      const t = terminal();
      Object.assign(t.input, { isTTY: true });
      const answer = t.channel.ask(prompt(), never());
      await t.waitFor(MENU);
      t.type('o\n'); // arrives at once, as buffered keys do when reading starts
      await t.waitFor('ignored a line typed before this question was shown');
      await new Promise((r) => setTimeout(r, 300));
      t.type('r\n');
      expect(await answer).toMatchObject({ decision: 'grant', scope: 'run' });
      await t.channel.close?.();
    },
  );

  it('prints lineage, tool, preview, rule, reason and every risk line', async () => {
    const t = terminal();
    const answer = t.channel.ask(
      prompt({
        lineage: ['run_root', 'run_child'],
        runId: 'run_child',
        risk: ['network: curl', 'write: out.txt'],
        preview: 'curl -o out.txt https://example.test\ncat out.txt',
      }),
      never(),
    );
    await t.waitFor(MENU);
    const text = t.printed();
    for (const part of [
      'run_root › run_child',
      'bash',
      'ask: bash(git commit*)',
      'git commit changes the repository history',
      'network: curl',
      'write: out.txt',
      '│ curl -o out.txt https://example.test',
      '│ cat out.txt',
      'req_1',
    ]) {
      expect(text).toContain(part);
    }
    t.type('d\nno\n');
    await answer;
    await t.channel.close?.();
  });

  it('shows lineage only for a sub-agent', async () => {
    const t = terminal();
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    expect(t.printed()).not.toContain('lineage');
    t.type('o\n');
    await answer;
    await t.channel.close?.();
  });

  it('shows control and bidi characters from the model as escapes, never raw', async () => {
    const t = terminal();
    const answer = t.channel.ask(
      prompt({ preview: 'rm -rf ~ \u001b[2K\u001b[1Aecho harmless', reason: 'line one\nline two \u202e' }),
      never(),
    );
    await t.waitFor(MENU);
    const text = t.printed();
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u202e');
    expect(text).toContain('\\u{1b}[2K');
    expect(text).toContain('line one\\nline two \\u{202e}');
    t.type('d\n\n');
    await answer;
    await t.channel.close?.();
  });

  it('settles promptly on abort, also while queued behind another prompt', async () => {
    const t = terminal();
    const first = new AbortController();
    const second = new AbortController();
    const a = t.channel.ask(prompt({ requestId: 'req_a' }), first.signal);
    const b = t.channel.ask(prompt({ requestId: 'req_b' }), second.signal);
    await t.waitFor(MENU);
    second.abort();
    expect(await b).toEqual({ decision: 'pause', channel: 'terminal', reason: 'cancelled' });
    expect(t.printed()).not.toContain('req_b');
    first.abort();
    expect(await a).toEqual({ decision: 'pause', channel: 'terminal', reason: 'cancelled' });
    // Still usable afterwards.
    const c = t.channel.ask(prompt({ requestId: 'req_c' }), never());
    await t.waitFor(MENU, 2);
    t.type('o\n');
    expect(await c).toMatchObject({ decision: 'grant' });
    await t.channel.close?.();
  });

  it('names the OS user as approver by default', async () => {
    const t = terminal(null);
    const answer = t.channel.ask(prompt(), never());
    await t.waitFor(MENU);
    t.type('o\n');
    const who = process.env.USER || os.userInfo().username;
    expect(((await answer) as Extract<ApprovalAnswer, { approver: string }>).approver).toBe(`user:${who}`);
    await t.channel.close?.();
  });
});

describe('headless channel', () => {
  it('pauses at once with a hint on how to approve', async () => {
    expect(await headlessChannel('pause').ask(prompt(), never())).toEqual({
      decision: 'pause',
      channel: 'headless',
      reason: 'no approver is attached (headless run); approve with `gatehouse approve`',
    });
  });

  it('denies at once under --on-ask deny', async () => {
    const ch = headlessChannel('deny');
    expect(ch.name).toBe('headless');
    expect(await ch.ask(prompt(), never())).toEqual({
      decision: 'deny',
      approver: 'policy:on-ask-deny',
      channel: 'headless',
      reason: 'approval needed but this run denies asks (--on-ask deny)',
    });
  });
});

describe('previewOf', () => {
  it('shows a bash command as is', () => {
    expect(previewOf('bash', { command: 'npm test -- --watch=false', description: 'tests' })).toBe(
      'npm test -- --watch=false',
    );
  });

  it('shows an edit as a diff with a/ b/ headers', () => {
    const text = previewOf('edit_file', {
      path: 'src/a.ts',
      oldText: 'const a = 1;\nconst b = 2;\nconst c = 3;\n',
      newText: 'const a = 1;\nconst b = 20;\nconst c = 3;\nconst d = 4;\n',
    });
    expect(text.split('\n')).toEqual([
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -3 +4 lines @@',
      ' const a = 1;',
      '-const b = 2;',
      '+const b = 20;',
      ' const c = 3;',
      '+const d = 4;',
    ]);
  });

  it('diffs lines that moved, not only a changed middle', () => {
    const lines = previewOf('edit_file', { path: 'x', oldText: 'a\nb\nc\nd', newText: 'b\nc\na\nd' })
      .split('\n')
      .slice(3);
    expect(lines.filter((l) => l.startsWith('-'))).toEqual(['-a']);
    expect(lines.filter((l) => l.startsWith('+'))).toEqual(['+a']);
    expect(lines.filter((l) => l.startsWith(' '))).toEqual([' b', ' c', ' d']);
  });

  it('shows a write as its path and first 40 lines marked +', () => {
    const content = Array.from({ length: 45 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const lines = previewOf('write_file', { path: 'docs/new.md', content }).split('\n');
    expect(lines[0]).toContain('docs/new.md');
    expect(lines).toContain('+line 1');
    expect(lines).toContain('+line 40');
    expect(lines).not.toContain('+line 41');
    expect(lines[lines.length - 1]).toBe('… 5 more lines');
  });

  it('shows other tools as canonical JSON, cut to 2,000 characters', () => {
    expect(previewOf('grep', { pattern: 'TODO', path: 'src' })).toBe('{"path":"src","pattern":"TODO"}');
    const long = previewOf('delegate', { task: 'x'.repeat(5_000) });
    expect(long.startsWith('{"task":"xxx')).toBe(true);
    expect(long.length).toBeLessThan(2_100);
    expect(long).toMatch(/more chars\)$/);
  });

  it('falls back to JSON when a known tool has an unexpected input', () => {
    expect(previewOf('edit_file', { path: 'a' })).toBe('{"path":"a"}');
  });
});
