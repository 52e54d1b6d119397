import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunLog } from '../../src/events/index';
import { OUTPUT_LIMITS, showCommand } from '../../src/cli/history';
import { tempStateDir } from '../events/helpers';

/** `gatehouse show RUN --output`: each observation's text under its line, bounded and with control characters shown. */
describe('gatehouse show --output', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  function runWith(contents: string[]): string {
    const state = tempStateDir();
    const log = RunLog.create(state, 'run_show');
    log.append('run.started', 'user', { task: 't', mode: 'confirm-each', surface: ['bash'] });
    contents.forEach((content, i) =>
      log.append('tool.observation', 'runtime', {
        callId: `call_${i}`,
        observationId: `obs-${i + 1}`,
        tool: 'bash',
        outcome: 'ok',
        content,
        truncated: false,
      }),
    );
    log.close();
    return state;
  }

  function show(state: string, output: boolean): string {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    expect(showCommand('run_show', state, { output })).toBe(0);
    vi.restoreAllMocks();
    return out.join('');
  }

  it('prints what the model was shown, indented under its event, and only with --output', () => {
    const state = runWith(['pass 2\nfail 0\n', '']);
    const plain = show(state, false);
    expect(plain).not.toContain('pass 2');
    const lines = show(state, true).split('\n');
    const at = lines.findIndex((l) => l.includes('obs-1 ok'));
    expect(lines.slice(at + 1, at + 3)).toEqual(['        | pass 2', '        | fail 0']);
    expect(lines[at + 3]).toContain('obs-2 ok');
    expect(lines[at + 4]).toBe('        | (empty)');
  });

  it('neutralises terminal control characters and bounds what it prints', () => {
    const hostile = '\u001b[2J\u001b]0;title\u0007clear\rover \u202eevil';
    const many = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
    const text = show(runWith([hostile, many, 'x'.repeat(100_000)]), true);
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    expect(text).toContain('        | \\u{1b}[2J\\u{1b}]0;title\\u{7}clear\\u{d}over \\u{202e}evil');
    expect(text).toContain(`        | line ${OUTPUT_LIMITS.lines - 1}\n`);
    expect(text).not.toContain(`| line ${OUTPUT_LIMITS.lines}\n`);
    expect(text).toMatch(/\| … \d+ more character\(s\), 460 more line\(s\) not shown; the log has them all/);
    const long = text.split('\n').find((l) => l.startsWith('        | xxx'))!;
    expect(long.length).toBeLessThanOrEqual(OUTPUT_LIMITS.chars + 10);
    expect(text).toContain(`| … ${100_000 - OUTPUT_LIMITS.chars} more character(s), 0 more line(s) not shown`);
  });
});
