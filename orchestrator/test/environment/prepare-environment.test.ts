import { afterEach, describe, expect, it } from 'vitest';
import type { CommandResult, CommandRunner } from '../../src/environment/command-runner';
import {
  prepareEnvironment,
  type EnvironmentPorts,
  type EnvironmentSpec,
} from '../../src/environment/prepare-environment';
import { TestLog } from '../../src/testing/test-log';

const spec = (over: Partial<EnvironmentSpec> = {}): EnvironmentSpec => ({
  image: 'preset:node',
  setup: ['npm ci'],
  egress: { setup: ['registry.example:4873'], agent: [], deny: [] },
  secrets: {},
  readScope: '{}',
  ...over,
});

/** Ports whose sandbox answers commands from a table; records what happened. */
function ports(o: { cached?: boolean; answers?: Record<string, Partial<CommandResult>> } = {}) {
  const seen = {
    commands: [] as Array<{ command: string; env?: Record<string, string> }>,
    destroyed: 0,
    saved: [] as string[],
  };
  const run: CommandRunner = async (command, opts) => {
    seen.commands.push({ command, ...(opts.env ? { env: opts.env } : {}) });
    if (opts.purpose === 'preflight') {
      const lines = command.split('\n').map((l) => (l.includes("'nope'") ? 'missing' : 'found\t/usr/bin/x'));
      return { status: 'ok', exitCode: 0, output: `${lines.join('\n')}\n`, truncated: false, durationMs: 1 };
    }
    opts.onOutput?.({ v: 1, invocationId: 'inv_x', seq: 0, stream: 'stdout', data: `ran ${command}\n` });
    return {
      status: 'ok',
      exitCode: 0,
      output: `ran ${command}\n`,
      truncated: false,
      durationMs: 2,
      ...o.answers?.[command],
    };
  };
  const p: EnvironmentPorts = {
    runImage: async (image) => ({ tag: `gatehouse/run:${image.replace(':', '-')}`, id: `sha256:${image}` }),
    imageExists: async () => o.cached ?? false,
    startSetupSandbox: async () => ({
      run,
      proxyEnv: { HTTP_PROXY: 'http://gatehouse-egress:3128' },
      saveResult: async (tag) => {
        seen.saved.push(tag);
        return { roots: ['node_modules'] };
      },
      destroy: async () => {
        seen.destroyed++;
      },
    }),
  };
  return { p, seen };
}

describe('prepareEnvironment', () => {
  const logs: TestLog[] = [];
  afterEach(() => {
    for (const l of logs.splice(0)) l.dispose();
  });
  const newLog = (): TestLog => {
    const l = new TestLog();
    logs.push(l);
    return l;
  };
  const types = (l: TestLog): string[] => l.events().map((e) => e.type);

  it('without setup, the run image is the environment and nothing is logged', async () => {
    const log = newLog();
    const { p, seen } = ports();
    const r = await prepareEnvironment({
      spec: spec({ setup: [] }),
      repoDir: '/nonexistent',
      log,
      ports: p,
      redact: (s) => s,
    });
    expect(r).toMatchObject({ kind: 'ready', image: 'gatehouse/run:preset-node', cacheHit: false });
    expect(types(log)).toEqual([]);
    expect(seen.commands).toEqual([]);
  });

  it('a cache hit skips setup and says so', async () => {
    const log = newLog();
    const { p, seen } = ports({ cached: true });
    const r = await prepareEnvironment({ spec: spec(), repoDir: '/nonexistent', log, ports: p, redact: (s) => s });
    expect(r).toMatchObject({ kind: 'ready', cacheHit: true });
    expect(r.kind === 'ready' && r.image).toMatch(/^gatehouse\/setup-cache:[0-9a-f]{24}$/);
    expect(types(log)).toEqual(['setup.started', 'setup.completed']);
    expect(log.events()[1]?.data).toMatchObject({ cacheHit: true });
    expect(seen.commands).toEqual([]);
    expect(seen.destroyed).toBe(0);
  });

  it('a miss runs preflight and every command with the proxy and the secrets, then caches the result', async () => {
    const log = newLog();
    const { p, seen } = ports();
    const live: string[] = [];
    const r = await prepareEnvironment({
      spec: spec({ setup: ['npm ci', 'npm run build'], secrets: { NPM_TOKEN: 's3cr3t-value' } }),
      repoDir: '/nonexistent',
      log,
      ports: p,
      redact: (s) => s.replaceAll('s3cr3t-value', '[REDACTED]'),
      onOutput: (t) => live.push(t),
    });
    expect(r).toMatchObject({ kind: 'ready', cacheHit: false });
    expect(types(log)).toEqual([
      'setup.started',
      'preflight.completed',
      'setup.command',
      'setup.command',
      'setup.completed',
    ]);
    expect(seen.commands.slice(1).map((c) => c.command)).toEqual(['npm ci', 'npm run build']);
    expect(seen.commands[1]?.env).toEqual({ HTTP_PROXY: 'http://gatehouse-egress:3128', NPM_TOKEN: 's3cr3t-value' });
    expect(seen.commands[0]?.env).toBeUndefined();
    expect(seen.saved).toHaveLength(1);
    expect(seen.destroyed).toBe(1);
    expect(live).toEqual(['ran npm ci\n', 'ran npm run build\n']);
    const started = log.events()[0]?.data as { secrets: string[] };
    expect(started.secrets).toEqual(['NPM_TOKEN']);
    expect(JSON.stringify(log.events())).not.toContain('s3cr3t-value');
  });

  it('a secret cut in two by the output chunks is still redacted in the live output (red team)', async () => {
    const log = newLog();
    const { p } = ports();
    const chunked: CommandRunner = async (command, opts) => {
      if (opts.purpose === 'preflight')
        return { status: 'ok', exitCode: 0, output: 'found\t/usr/bin/npm\n', truncated: false, durationMs: 1 };
      for (const data of ['token is s3cr', '3t-value\nand s3', 'cr3t-v', 'alue at the end'])
        opts.onOutput?.({ v: 1, invocationId: 'inv_x', seq: 0, stream: 'stdout', data });
      const output = 'token is s3cr3t-value\nand s3cr3t-value at the end';
      return { status: 'ok', exitCode: 0, output, truncated: false, durationMs: 2 };
    };
    const start = p.startSetupSandbox.bind(p);
    p.startSetupSandbox = async (x) => ({ ...(await start(x)), run: chunked });
    const live: string[] = [];
    const r = await prepareEnvironment({
      spec: spec({ secrets: { NPM_TOKEN: 's3cr3t-value' } }),
      repoDir: '/nonexistent',
      log,
      ports: p,
      redact: (s) => s.replaceAll('s3cr3t-value', '[REDACTED]'),
      onOutput: (t) => live.push(t),
    });
    expect(r).toMatchObject({ kind: 'ready' });
    expect(live.join('')).toBe('token is [REDACTED]\nand [REDACTED] at the end\n');
  });

  it('a failing command ends setup with its output, runs nothing after it, caches nothing', async () => {
    const log = newLog();
    const { p, seen } = ports({
      answers: { 'npm ci': { exitCode: 1, output: 'npm ERR! 404 Not Found - GET http://r/left-pad\nline2\n' } },
    });
    const r = await prepareEnvironment({
      spec: spec({ setup: ['npm ci', 'npm test'] }),
      repoDir: '/nonexistent',
      log,
      ports: p,
      redact: (s) => s,
    });
    expect(r.kind).toBe('failed');
    expect(r.kind === 'failed' && r.reason).toContain('setup command 1 (npm ci) failed (exit 1)');
    expect(r.kind === 'failed' && r.reason).toContain('404 Not Found');
    expect(types(log)).toEqual(['setup.started', 'preflight.completed', 'setup.command', 'setup.failed']);
    expect(seen.commands.map((c) => c.command)).not.toContain('npm test');
    expect(seen.saved).toEqual([]);
    expect(seen.destroyed).toBe(1);
  });

  it('a missing program fails preflight before any setup command runs, naming it and what to do', async () => {
    const log = newLog();
    const { p, seen } = ports();
    const r = await prepareEnvironment({
      spec: spec({ setup: ['nope install'] }),
      repoDir: '/nonexistent',
      log,
      ports: p,
      redact: (s) => s,
    });
    expect(r).toMatchObject({ kind: 'failed', stage: 'preflight' });
    expect(r.kind === 'failed' && r.reason).toMatch(/nope \(needed by setup\).*--image/s);
    expect(seen.commands).toHaveLength(1);
    expect(seen.destroyed).toBe(1);
  });

  it('an image that cannot be prepared fails at once', async () => {
    const log = newLog();
    const { p } = ports();
    p.runImage = async () => {
      throw new Error('no such image: team/ci:1');
    };
    const r = await prepareEnvironment({ spec: spec(), repoDir: '/nonexistent', log, ports: p, redact: (s) => s });
    expect(r).toMatchObject({ kind: 'failed', stage: 'image' });
    expect(types(log)).toEqual(['setup.failed']);
  });
});
