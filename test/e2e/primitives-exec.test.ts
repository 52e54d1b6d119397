import { describe, expect, it } from 'vitest';
import { type OutputChunk } from '@gatehouse/shared';
import { run, runtimeApproval, rootExec, sh } from '../support/sandbox';
import { dataOf, useSandbox } from '../support/primitives';

/** Behaviour of exec, against a real sandbox. */

describe('exec', () => {
  const t = useSandbox();

  it('propagates the exit code', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'echo before; exit 3' });
    expect(r.status).toBe('failed');
    expect(r.exitCode).toBe(3);
    expect(r.output).toBe('before\n');
    const okRun = await run(t.sandbox, 'exec', { command: 'true' });
    expect(okRun.status).toBe('ok');
    expect(okRun.exitCode).toBe(0);
  });

  it('captures stdout and stderr', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'echo to-out; echo to-err >&2; echo out-again' });
    expect(r.status).toBe('ok');
    expect(r.output).toContain('to-out\n');
    expect(r.output).toContain('to-err\n');
    expect(r.output).toContain('out-again\n');
    expect(dataOf(r, 'exec')).toEqual({
      kind: 'exec',
      stdoutBytes: 'to-out\nout-again\n'.length,
      stderrBytes: 'to-err\n'.length,
    });
  });

  it('streams output chunks, in order, while the command runs', async () => {
    const chunks: OutputChunk[] = [];
    // The command waits for a file the test creates only once the first chunk has arrived: it can
    // finish with "released" only if output really streamed while it was running.
    const input = {
      command:
        'echo chunk1; for i in $(seq 1 200); do test -e stream-go && break; sleep 0.05; done; test -e stream-go && ' +
        'echo released; echo err-chunk >&2; sleep 0.3; echo last',
    };
    let released: Promise<unknown> | undefined;
    const r = await t.sandbox.invoke('exec', input, {
      approval: runtimeApproval('exec', input, 'test'),
      onOutput: (chunk) => {
        chunks.push(chunk);
        if (!released && chunk.data.includes('chunk1'))
          released = run(t.sandbox, 'write_file', { path: 'stream-go', content: '' });
      },
    });
    await released;
    expect(r.status).toBe('ok');
    expect(r.output).toBe('chunk1\nreleased\nerr-chunk\nlast\n');
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.map((c) => c.data).join('')).toBe('chunk1\nreleased\nerr-chunk\nlast\n');
    expect(chunks.find((c) => c.data.includes('err-chunk'))?.stream).toBe('stderr');
    expect(chunks.find((c) => c.data.includes('chunk1'))?.stream).toBe('stdout');
  });

  it('runs with a scrubbed environment: no gatehouse config, no NATS credentials', async () => {
    const env = await sh(t.sandbox, 'env');
    expect(env).toMatch(/^PATH=/m);
    expect(env).toMatch(/^HOME=\/tmp$/m);
    expect(env).not.toMatch(/^GATEHOUSE_|_GATEHOUSE_/m);
    expect(env).not.toMatch(/NATS/i);
    expect(env).not.toContain('nats://');
    expect(env).not.toMatch(/^SU[A-Z2-7]{50,}/m); // an nkey seed
    expect(env).not.toContain('BEGIN');
    // The daemon's state directory is closed to commands; the credentials file in it was deleted
    // once the daemon read it (looked at as root, around the daemon).
    const closed = await run(t.sandbox, 'exec', { command: 'ls -A /var/gatehouse' });
    expect(closed.status).toBe('failed');
    expect(closed.output).toMatch(/Permission denied/);
    const state = await rootExec(t.driver, t.sandbox, ['ls', '-A', '/var/gatehouse']);
    expect(state.exitCode).toBe(0);
    expect(state.output).toContain('baseline.git');
    expect(state.output).not.toContain('creds');
    // git is made safe by the daemon itself, whatever the caller passed: the wrapper first on PATH,
    // and the program-key overrides after the caller's own GIT_CONFIG entries.
    const git = await run(t.sandbox, 'exec', {
      command:
        'echo "$PATH"; echo "$GIT_CONFIG_COUNT"; git config --get core.fsmonitor; git config --get safe.directory',
      env: {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.fsmonitor',
        GIT_CONFIG_VALUE_0: './evil.sh',
        PATH: '/usr/bin:/bin',
      },
    });
    const [pathLine, count, fsmonitor, safeDir] = git.output.trim().split('\n');
    expect(pathLine).toBe('/opt/gatehouse/bin:/usr/bin:/bin');
    expect(Number(count)).toBeGreaterThan(20);
    expect(fsmonitor).toBe('false');
    expect(safeDir).toBe('*');
    // Extra variables are passed through.
    const r = await run(t.sandbox, 'exec', { command: 'echo "$EXTRA_VAR"', env: { EXTRA_VAR: 'from-the-caller' } });
    expect(r.output).toBe('from-the-caller\n');
  });

  it('trackChanges lists the files the command touched', async () => {
    const r = await run(t.sandbox, 'exec', {
      command:
        'echo new > tracked-new.txt && echo more >> README.md && rm delete-me.txt && mkdir -p d/e && echo x > ' +
        'd/e/f.txt && cat lines.txt > /dev/null',
      trackChanges: true,
    });
    expect(r.status).toBe('ok');
    expect(r.filesChanged).toEqual(['README.md', 'd/e/f.txt', 'delete-me.txt', 'tracked-new.txt']);

    const untracked = await run(t.sandbox, 'exec', { command: 'echo again > tracked-new.txt' });
    expect(untracked.filesChanged).toEqual([]);
  });

  it('cancel through the AbortSignal kills the command quickly and reports aborted', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 300);
    const r = await run(
      t.sandbox,
      'exec',
      { command: 'echo started; sleep 31.5; echo never' },
      { signal: ac.signal, timeoutMs: 60_000 },
    );
    const took = Date.now() - started;
    expect(r.status).toBe('aborted');
    expect(r.error?.code).toBe('cancelled');
    expect(r.output).toBe('started\n');
    expect(took).toBeLessThan(3_000);
    // Nothing of it is left running.
    const left = await sh(
      t.sandbox,
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 31' || true",
    );
    expect(left).toBe('0\n');
  });

  it('a command that outlives timeoutMs is killed and reported as timeout', async () => {
    const started = Date.now();
    const r = await run(t.sandbox, 'exec', { command: 'sleep 20' }, { timeoutMs: 500 });
    expect(r.status).toBe('timeout');
    expect(r.error?.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('cwd runs the command in that workspace directory', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'pwd; ls', cwd: 'src/lib' });
    expect(r.status).toBe('ok');
    expect(r.output).toBe('/workspace/src/lib\nb.ts\nc.js\n');
    const file = await run(t.sandbox, 'exec', { command: 'pwd', cwd: 'README.md' });
    expect(file.status).toBe('rejected');
    expect(file.error?.code).toBe('not_a_directory');
    const missing = await run(t.sandbox, 'exec', { command: 'pwd', cwd: 'no/such/dir' });
    expect(missing.status).toBe('failed');
    expect(missing.error?.code).toBe('not_found');
  });
});
