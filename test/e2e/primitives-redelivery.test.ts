import { describe, expect, it } from 'vitest';
import { invocation, sendRaw, sh } from '../support/sandbox';
import { useSandbox, catFile } from '../support/primitives';

/** Invocations delivered more than once, against a real sandbox. */

describe('redelivery', () => {
  const t = useSandbox();

  it('the same invocation sent twice runs once; the second reply is the recorded result', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo line >> log.txt; wc -l < log.txt' });
    const first = await sendRaw(t.driver, t.sandbox, m);
    const second = await sendRaw(t.driver, t.sandbox, m);
    expect(first.status).toBe('ok');
    expect(first.replayed).toBe(false);
    expect(first.output).toBe('1\n');
    expect(second.replayed).toBe(true);
    expect(second.invocationId).toBe(first.invocationId);
    expect({ ...second, replayed: false }).toEqual(first);
    expect(await catFile(t.sandbox, 'log.txt')).toBe('line\n');
  });

  it('two copies delivered concurrently still run once', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo line >> log2.txt; sleep 0.3; wc -l < log2.txt' });
    const results = await Promise.all([sendRaw(t.driver, t.sandbox, m), sendRaw(t.driver, t.sandbox, m)]);
    expect(results.map((r) => r.replayed).sort()).toEqual([false, true]);
    expect(results.map((r) => r.output)).toEqual(['1\n', '1\n']);
    expect(await catFile(t.sandbox, 'log2.txt')).toBe('line\n');
  });

  it('a reused invocation id does not run a different action', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo first > reused.txt' });
    expect((await sendRaw(t.driver, t.sandbox, m)).replayed).toBe(false);
    const other = invocation(
      t.sandbox,
      'exec',
      { command: 'echo second > reused.txt; touch reused-ran.txt' },
      { invocationId: m.invocationId },
    );
    const r = await sendRaw(t.driver, t.sandbox, other);
    expect(r.replayed).toBe(true);
    expect(await sh(t.sandbox, 'cat reused.txt; ls reused-ran.txt 2>/dev/null || echo absent')).toBe('first\nabsent\n');
  });
});
