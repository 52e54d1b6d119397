import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, egressNetworkGateway } from '@gatehouse/orchestrator';
import { startRegistry, type TestRegistry } from '../support/registry';
import { cleanScratch, dataOf, gitRepo, listener, runCli, script, scratch } from '../support/setup-phase';

/**
 * The setup phase end to end, through the real CLI: a real npm registry (verdaccio) on the host's
 * address on gatehouse's outside network, reached only through the per-run egress proxy; a second
 * listener beside it that nothing may reach; the agent phase with no way out; the cache.
 */

/** Prints what it got from host:port directly, and through $HTTP_PROXY when there is one. */
const PROBE = `const http = require('http');
const [host, port] = [process.argv[2], Number(process.argv[3])];
const get = (o) => new Promise((r) => {
  const req = http.request({ ...o, timeout: 3000 }, (res) => {
    let b = '';
    res.on('data', (d) => (b += d));
    res.on('end', () => r('status ' + res.statusCode + ' ' + b.slice(0, 40)));
  });
  req.on('error', (e) => r('error ' + (e.code || e.message)));
  req.on('timeout', () => { req.destroy(); r('error timeout'); });
  req.end();
});
(async () => {
  const direct = await get({ host, port, path: '/' });
  const p = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : undefined;
  const proxied = p ? await get({ host: p.hostname, port: p.port, path: 'http://' + host + ':' + port + '/' }) : 'no proxy';
  console.log('PROBE ' + JSON.stringify({ direct, proxied }));
})();
`;

const cacheImages = new Set<string>();
let gateway: string;
let registry: TestRegistry;
let other: Awaited<ReturnType<typeof listener>>;

beforeAll(async () => {
  gateway = await egressNetworkGateway(docker());
  // A port of its own each run, so the cache key (which holds the allowlist) is new each time.
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  registry = await startRegistry(gateway, port);
  await registry.publish('gh-tiny', '1.0.0', 'from-the-registry');
  other = await listener(gateway, 'the other listener');
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await other?.close();
  for (const image of cacheImages)
    await docker()
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  cleanScratch();
});

function jsRepo(): string {
  const dir = scratch('gh-setup-js-');
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'app',
      version: '1.0.0',
      scripts: { test: 'node test.js' },
      dependencies: { 'gh-tiny': '1.0.0' },
    }),
  );
  writeFileSync(path.join(dir, '.npmrc'), `registry=${registry.url}/\n`);
  execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: dir, timeout: 60_000 });
  return gitRepo({
    'package.json': JSON.stringify({
      name: 'app',
      version: '1.0.0',
      scripts: { test: 'node test.js' },
      dependencies: { 'gh-tiny': '1.0.0' },
    }),
    'package-lock.json': readFileSync(path.join(dir, 'package-lock.json'), 'utf8'),
    '.npmrc': `registry=${registry.url}/\n`,
    '.gitignore': 'node_modules/\n',
    'test.js':
      "const assert = require('assert');\n" +
      "assert.strictEqual(require('gh-tiny').value, 'from-the-registry');\n" +
      "console.log('1 test passed');\n",
    'probe.js': PROBE,
  });
}

function config(dir: string, body: object): string {
  const file = path.join(dir, 'gatehouse-config.json');
  // The model's commands are the test's own: allowed, so a headless run does not pause on them.
  writeFileSync(file, JSON.stringify({ policy: { allow: ['bash'] }, ...body }));
  return file;
}

describe('setup phase', () => {
  it('npm ci installs through the proxy from the allowed registry only; the agent reaches nothing; cache', async () => {
    const repo = jsRepo();
    const cfg = config(scratch(), {
      setup: ['npm ci --no-audit --no-fund', `node probe.js ${gateway} ${other.port}`],
      check: 'npm test',
      egress: { setup: [`${gateway}:${registry.port}`] },
    });
    const model = script(
      ['npm test', `node probe.js ${gateway} ${other.port}`, `node probe.js ${gateway} ${registry.port}`],
      'The tests pass (obs-1).',
    );
    const first = runCli(['--model', `scripted:${model}`, '--repo', repo, '--config', cfg, '--json']);
    expect(first.status, first.stderr).toBe(0);
    const commands = dataOf<{ command: string; exitCode: number; output: string }>(first.events, 'setup.command');
    expect(commands.map((c) => c.exitCode)).toEqual([0, 0]);
    // Setup could not reach the other listener, neither directly nor through the proxy.
    const setupProbe = JSON.parse(/PROBE (.*)/.exec(commands[1]!.output)![1]!) as { direct: string; proxied: string };
    expect(setupProbe.direct).toMatch(/^error /);
    expect(setupProbe.proxied).toMatch(/^status 403/);
    const denied = dataOf<{ host: string; port: number; phase: string }>(first.events, 'egress.denied');
    expect(denied).toContainEqual(expect.objectContaining({ host: gateway, port: other.port, phase: 'setup' }));
    const allowed = dataOf<{ host: string; port: number }>(first.events, 'egress.allowed');
    expect(allowed.length).toBeGreaterThan(0);
    expect(allowed.every((a) => a.host === gateway && a.port === registry.port)).toBe(true);
    const completed = dataOf<{ cacheHit: boolean; image: string }>(first.events, 'setup.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]!.cacheHit).toBe(false);
    cacheImages.add(completed[0]!.image);
    // The agent: the tests pass with the cached node_modules; neither listener is reachable, no proxy.
    const all = dataOf<{ callId: string; outcome: string; content: string }>(first.events, 'tool.observation');
    // Gatehouse's own run of the check (check_N, in a fresh HOME) passes too; the rest are the model's.
    const own = all.filter((o) => o.callId.startsWith('check_'));
    expect(own).toHaveLength(1);
    expect(own[0]!.outcome).toBe('ok');
    expect(own[0]!.content).toContain('1 test passed');
    const observations = all.filter((o) => !o.callId.startsWith('check_'));
    expect(observations[0]!.outcome).toBe('ok');
    expect(observations[0]!.content).toContain('1 test passed');
    for (const o of observations.slice(1)) {
      const probe = JSON.parse(/PROBE (\{.*\})/.exec(o.content)![1]!) as { direct: string; proxied: string };
      expect(probe.direct).toMatch(/^error /);
      expect(probe.proxied).toBe('no proxy');
    }
    expect(other.hits()).toBe(0);

    const second = runCli(['--model', `scripted:${model}`, '--repo', repo, '--config', cfg, '--json']);
    expect(second.status, second.stderr).toBe(0);
    expect(dataOf<{ cacheHit: boolean }>(second.events, 'setup.completed')).toEqual([
      expect.objectContaining({ cacheHit: true, image: completed[0]!.image }),
    ]);
    expect(dataOf(second.events, 'setup.command')).toEqual([]);
    const again = dataOf<{ outcome: string; content: string }>(second.events, 'tool.observation')[0]!;
    expect(again.outcome).toBe('ok');
    expect(again.content).toContain('1 test passed');
    expect(other.hits()).toBe(0);
  }, 600_000);

  it('a failing setup command ends the run before any model call, exit 5, with its output', () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const cfg = config(scratch(), { setup: ['echo about to fail; ls /no/such/dir'] });
    const r = runCli(['--model', `scripted:${script([], 'done')}`, '--repo', repo, '--config', cfg]);
    expect(r.status, r.stderr).toBe(5);
    expect(r.events.some((e) => e.type === 'model.request')).toBe(false);
    const failed = dataOf<{ stage: string; reason: string }>(r.events, 'setup.failed')[0]!;
    expect(failed.stage, failed.reason).toBe('command');
    expect(failed.reason).toMatch(/setup command 1 .* failed \(exit 2\)[\s\S]*No such file or directory/);
    expect(r.stdout + r.stderr).toContain('about to fail');
  }, 300_000);

  it('preflight names a missing program of setup or check and how to choose an image, exit 5', () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const missingSetup = runCli([
      '--model',
      `scripted:${script([], 'done')}`,
      '--repo',
      repo,
      '--config',
      config(scratch(), { setup: ['pytest --version'] }),
    ]);
    expect(missingSetup.status, missingSetup.stderr).toBe(5);
    expect(missingSetup.stdout + missingSetup.stderr).toMatch(/pytest \(needed by setup\)[\s\S]*--image/);
    const missingCheck = runCli([
      '--model',
      `scripted:${script([], 'done')}`,
      '--repo',
      repo,
      '--config',
      config(scratch(), { check: 'cargo test' }),
    ]);
    expect(missingCheck.status, missingCheck.stderr).toBe(5);
    expect(missingCheck.stdout + missingCheck.stderr).toMatch(/cargo \(needed by check\)/);
    expect(missingCheck.events.some((e) => e.type === 'model.request')).toBe(false);
  }, 300_000);

  it('a secret given to setup reaches setup only: not the log, not the agent, and not the cache', () => {
    // A name the secret-name rule would not catch: redacted because it was given to setup.
    const secret = 'gh-setup-value-5f1e2d3c4b';
    const repo = gitRepo({ '.gitignore': 'out/\n' });
    const cfg = config(scratch(), { setup: ['test -n "$GH_SETUP_VALUE" && echo "setup saw $GH_SETUP_VALUE"'] });
    const model = script(['echo "agent sees [${GH_SETUP_VALUE:-nothing}]"'], 'done (obs-1)');
    const env = { GH_SETUP_VALUE: secret };
    const r = runCli(
      ['--model', `scripted:${model}`, '--repo', repo, '--config', cfg, '--setup-env', 'GH_SETUP_VALUE'],
      env,
    );
    expect(r.status, r.stderr).toBe(0);
    for (const c of dataOf<{ image: string }>(r.events, 'setup.completed')) cacheImages.add(c.image);
    expect(JSON.stringify(r.events)).not.toContain(secret);
    expect(r.stderr + r.stdout).not.toContain(secret);
    expect(dataOf<{ output: string }>(r.events, 'setup.command')[0]!.output).toContain('setup saw [REDACTED');
    expect(dataOf<{ content: string }>(r.events, 'tool.observation')[0]!.content).toContain('agent sees [nothing]');

    const leaky = config(scratch(), { setup: ['mkdir -p out && echo "$GH_SETUP_VALUE" > out/token'] });
    const l = runCli(
      ['--model', `scripted:${model}`, '--repo', repo, '--config', leaky, '--setup-env', 'GH_SETUP_VALUE'],
      env,
    );
    expect(l.status, l.stderr).toBe(5);
    const leaked = dataOf<{ stage: string; reason: string }>(l.events, 'setup.failed')[0]!;
    expect(leaked.stage).toBe('cache');
    expect(leaked.reason).toContain('GH_SETUP_VALUE into out/token');
  }, 300_000);

  it('a Python repository runs its pytest tests in preset:python', () => {
    const repo = gitRepo({
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n',
    });
    const cfg = config(scratch(), { image: 'preset:python', check: 'python3 -m pytest -q' });
    const r = runCli([
      '--model',
      `scripted:${script(['python3 -m pytest -q -p no:cacheprovider'], 'pass (obs-1)')}`,
      '--repo',
      repo,
      '--config',
      cfg,
    ]);
    expect(r.status, r.stderr).toBe(0);
    const obs = dataOf<{ outcome: string; content: string }>(r.events, 'tool.observation')[0]!;
    expect(obs.outcome).toBe('ok');
    expect(obs.content).toMatch(/1 passed/);
  }, 600_000);
});
