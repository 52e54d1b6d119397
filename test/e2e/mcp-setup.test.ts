import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { docker, egressNetworkGateway } from '@gatehouse/orchestrator';
import { bundleServer, packageVersion, REFERENCE_SERVERS } from '../support/mcp-servers';
import { startRegistry, type TestRegistry } from '../support/registry';
import { CLI, cleanScratch, dataOf, gitRepo, scratch } from '../support/setup-phase';

/**
 * An MCP server installed by the run's setup phase and used through the real CLI: the reference
 * filesystem server from npm (bundled from node_modules into one package with no dependencies) is
 * published into a local registry with no uplink, `npm ci` installs it through the setup phase's
 * egress proxy, the server runs inside the agent's sandbox (no network there), and a scripted model
 * calls its tools: one allowed by the policy, one denied. Nothing leaves this machine.
 */
const PACKAGE = 'gh-mcp-server-filesystem';
let registry: TestRegistry;
let gateway: string;
const cacheImages = new Set<string>();

beforeAll(async () => {
  gateway = await egressNetworkGateway(docker());
  registry = await startRegistry(gateway, 20_000 + Math.floor(Math.random() * 20_000));
  const pkg = scratch('gh-mcp-pkg-');
  await bundleServer('filesystem', path.join(pkg, 'index.mjs'));
  const version = packageVersion(REFERENCE_SERVERS.filesystem);
  writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({
      name: PACKAGE,
      version,
      description: `${REFERENCE_SERVERS.filesystem}@${version}, bundled into one file for a registry without uplinks`,
      type: 'module',
      bin: { 'mcp-server-filesystem': 'index.mjs' },
    }),
  );
  await registry.publishDir(pkg);
}, 180_000);

afterAll(async () => {
  await registry?.stop();
  for (const image of cacheImages)
    await docker()
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  cleanScratch();
});

function repo(): string {
  const manifest = {
    name: 'app',
    version: '1.0.0',
    devDependencies: { [PACKAGE]: packageVersion(REFERENCE_SERVERS.filesystem) },
  };
  const dir = scratch('gh-mcp-lock-');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  writeFileSync(path.join(dir, '.npmrc'), `registry=${registry.url}/\n`);
  execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: dir, timeout: 60_000 });
  return gitRepo({
    'package.json': manifest,
    'package-lock.json': readFileSync(path.join(dir, 'package-lock.json'), 'utf8'),
    '.npmrc': `registry=${registry.url}/\n`,
    '.gitignore': 'node_modules/\n',
    'README.md': 'The answer is 42.\n',
  });
}

function cli(stateDir: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, ...args, '--state-dir', stateDir], {
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, CI: 'true' },
    input: '',
  });
}

describe('an MCP server from the setup phase', () => {
  it('is installed by npm ci, runs in the sandbox, and its calls go through the gate into the log', () => {
    const dir = repo();
    const config = path.join(scratch('gh-mcp-cfg-'), 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        setup: ['npm ci --no-audit --no-fund'],
        egress: { setup: [`${gateway}:${registry.port}`] },
        mcp: { fs: { command: 'node', args: [`node_modules/${PACKAGE}/index.mjs`, '/workspace'] } },
        policy: {
          allow: [{ rule: 'mcp__fs__read_text_file(README.md)', match: ['/workspace/README.md'] }],
          deny: ['mcp__fs__write_file'],
        },
      }),
    );
    const model = path.join(scratch('gh-mcp-model-'), 'script.json');
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          { text: '', toolCalls: [{ name: 'mcp__fs__read_text_file', input: { path: '/workspace/README.md' } }] },
          { text: '', toolCalls: [{ name: 'mcp__fs__write_file', input: { path: 'README.md', content: 'no' } }] },
          { final: 'The README says the answer is 42 (obs-1).' },
        ],
      }),
    );
    const stateDir = scratch('gh-mcp-state-');
    const r = cli(stateDir, [
      'run',
      'task',
      '--model',
      `scripted:${model}`,
      '--repo',
      dir,
      '--config',
      config,
      '--json',
    ]);
    const runsDir = path.join(stateDir, 'runs');
    const [runId] = readdirSync(runsDir);
    const events = readFileSync(path.join(runsDir, runId!, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EventEnvelope);
    expect(r.status, r.stderr).toBe(0);
    const setup = dataOf<{ cacheHit: boolean; image: string }>(events, 'setup.completed');
    expect(setup).toHaveLength(1);
    cacheImages.add(setup[0]!.image);
    const listed = dataOf<{ server: string; ok: boolean; tools: Array<{ name: string }> }>(events, 'mcp.listed');
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ server: 'fs', ok: true });
    expect(listed[0]!.tools.map((t) => t.name)).toContain('mcp__fs__read_text_file');
    const observations = dataOf<{ tool: string; outcome: string; content: string }>(events, 'tool.observation');
    expect(observations[0]).toMatchObject({ tool: 'mcp__fs__read_text_file', outcome: 'ok' });
    expect(observations[0]!.content).toContain('The answer is 42.');
    expect(observations[0]!.content).toContain('data from MCP server fs (tool read_text_file)');
    expect(observations[1]).toMatchObject({ tool: 'mcp__fs__write_file', outcome: 'denied' });
    const approvals = dataOf<{ decision: string; policyId: string }>(events, 'tool.approval');
    expect(approvals.map((a) => a.policyId)).toEqual([
      'allow[0] mcp__fs__read_text_file(README.md)',
      'deny[0] mcp__fs__write_file',
    ]);
    // The agent's phase reached nothing: the only egress decisions are setup's, to the registry.
    for (const e of dataOf<{ phase: string; host: string }>(events, 'egress.allowed'))
      expect(e).toMatchObject({ phase: 'setup', host: gateway });
    // `gatehouse show` tells the calls like any other.
    const show = cli(stateDir, ['show', runId!]);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toContain('mcp__fs__read_text_file');
    expect(show.stdout).toContain('mcp__fs__write_file');
    // replay --mode dry-run decides the recorded MCP calls again under another policy (mcp.listed tells
    // their tools): the read that ran would now be denied.
    const stricter = path.join(scratch('gh-mcp-policy-'), 'policy.json');
    writeFileSync(stricter, JSON.stringify({ deny: ['mcp__fs'] }));
    const replay = cli(stateDir, ['replay', runId!, '--mode', 'dry-run', '--policy', stricter]);
    expect(replay.status, replay.stdout + replay.stderr).toBe(1);
    expect(replay.stdout).toMatch(/denied: 2 compared, 1 differed/);
    expect(replay.stdout).toContain('mcp__fs__read_text_file');
    // replay --mode trace rebuilds each turn's context, the MCP tools as mcp.listed recorded them shown.
    const trace = cli(stateDir, ['replay', runId!, '--mode', 'trace']);
    expect(trace.status, trace.stdout + trace.stderr).toBe(0);
    expect(trace.stdout).toMatch(/match/);
  });
});
