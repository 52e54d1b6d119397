import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltImage, ensureImages, ensureRuntimeImage } from '@gatehouse/orchestrator';
import * as secondHost from '../support/second-docker-host';
import { startSshAgent } from '../support/ssh-agent';

/**
 * Several Docker hosts: `gatehouse run --docker-host` against a second engine that is "remote"
 * (its own network namespace, TLS at 10.213.0.2:2376; scripts/second-docker-host.sh). The run's
 * sandbox, egress proxy and NATS server are all on that engine, the sandbox reaches NATS there
 * with its per-run credentials, and the main engine neither gets one of them nor breaks.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const main = new Docker();
let host2: secondHost.SecondDockerHost;

/** The environment of a CLI run: the second engine's TLS material, but no DOCKER_HOST (the flag says it). */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' };
  delete env.DOCKER_HOST;
  return { ...env, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: host2.env.DOCKER_CERT_PATH };
}

function mainBridgeUp(): boolean {
  return spawnSync('ip', ['link', 'show', 'docker0'], { stdio: 'ignore' }).status === 0;
}

/** A container start on the main engine (what the CI and everyone else on this machine need). */
async function mainEngineStartsContainers(natsImage: string): Promise<void> {
  const c = await main.createContainer({
    Image: natsImage,
    Entrypoint: ['nats-server'],
    Cmd: ['--version'],
    Labels: { 'gatehouse.test': 'docker-hosts' },
    HostConfig: { NetworkMode: 'bridge' },
  });
  try {
    await c.start();
    expect((await c.wait()) as { StatusCode: number }).toMatchObject({ StatusCode: 0 });
  } finally {
    await c.remove({ force: true });
  }
}

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-hosts-'));
  writeFileSync(path.join(dir, 'README.md'), '# two docker hosts\n');
  mkdirSync(path.join(dir, '.gatehouse'));
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=t@gatehouse', '-c', 'user.name=t', 'commit', '-qm', 'fixture');
  return dir;
}

let natsImage = '';

beforeAll(async () => {
  expect(mainBridgeUp(), 'the main engine has docker0 before the test').toBe(true);
  const images = await ensureImages({ prune: false });
  natsImage = images.nats;
  const toolchain = await ensureBuiltImage('preset-node', { prune: false });
  const runtime = await ensureRuntimeImage({ prune: false });
  host2 = secondHost.start();
  secondHost.loadImages([images.nats, images.egress, toolchain, runtime, images.sandbox]);
}, 900_000);

afterAll(() => {
  secondHost.stop();
}, 300_000);

/**
 * `gatehouse run --docker-host URL` of a scripted run whose sandbox prints its own container id
 * (its hostname) and waits, while gatehouse's containers are listed on both engines (bounded: 180 s).
 */
async function runWatchingEngines(dockerHost: string, env: NodeJS.ProcessEnv) {
  const dir = repo();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-hosts-run-'));
  writeFileSync(
    path.join(tmp, 'script.json'),
    JSON.stringify({
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: 'echo "sandbox-id=$(hostname)" && sleep 4' } }] },
        { final: 'Printed the sandbox id.' },
      ],
    }),
  );
  writeFileSync(path.join(tmp, 'policy.json'), JSON.stringify({ mode: 'sandboxed-auto' }));
  // An agent-phase allow list starts a per-run egress proxy; nothing is ever sent through it.
  writeFileSync(path.join(tmp, 'config.json'), JSON.stringify({ egress: { agent: ['gatehouse-test.invalid'] } }));
  const args = [
    cli,
    'run',
    'print where you run',
    '--repo',
    dir,
    '--model',
    `scripted:${path.join(tmp, 'script.json')}`,
    '--policy',
    path.join(tmp, 'policy.json'),
    '--config',
    path.join(tmp, 'config.json'),
    '--docker-host',
    dockerHost,
    '--json',
    '--state-dir',
    path.join(tmp, 'state'),
  ];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let done = false;
  void exited.then(() => (done = true));

  const onHost2 = new Map<string, string>();
  const onHost1 = new Set<string>();
  const deadline = Date.now() + 180_000;
  while (!done && Date.now() < deadline) {
    for (const c of await host2.docker.listContainers({ all: true, filters: { label: ['gatehouse.role'] } }))
      onHost2.set(c.Id, c.Labels['gatehouse.role']!);
    for (const c of await main.listContainers({ all: true, filters: { label: ['gatehouse.role'] } })) onHost1.add(c.Id);
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!done) child.kill('SIGKILL');
  return { code: await exited, stdout, stderr, onHost1, onHost2 };
}

describe('gatehouse run --docker-host (a second engine, TLS, its own network namespace)', () => {
  it('runs the sandbox, egress proxy and NATS on host 2, none on host 1; host 1 is unaffected', async () => {
    const { code, stdout, stderr, onHost1, onHost2 } = await runWatchingEngines(host2.env.DOCKER_HOST, cliEnv());
    expect(code, stderr).toBe(0);

    const events = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    const sandboxId = /sandbox-id=([0-9a-f]{12})/.exec(stdout)?.[1];
    expect(sandboxId, stdout).toBeDefined();

    // The sandbox that ran the command is host 2's container, and host 1 never listed it. Its
    // host name is that of the network holder whose namespace it joined (network-holder.ts).
    const host2Ids = [...onHost2.keys()];
    const sandbox = host2Ids.find((id) => id.startsWith(sandboxId!));
    expect(sandbox, `host 2 listed ${host2Ids.join(', ')}`).toBeDefined();
    expect(['sandbox', 'network-holder']).toContain(onHost2.get(sandbox!));
    expect([...onHost1].some((id) => id.startsWith(sandboxId!))).toBe(false);
    for (const id of host2Ids) expect(onHost1.has(id)).toBe(false);
    // The sandbox joined the holder of its network made ahead (network-holder.ts), on host 2 too.
    expect(new Set(onHost2.values())).toEqual(new Set(['sandbox', 'network-holder', 'egress-proxy', 'nats']));

    // Host 2's own NATS server, published on host 2's address (not this machine's loopback).
    const nats = await host2.docker.getContainer('gatehouse-nats').inspect();
    expect(nats.State.Running).toBe(true);
    expect(nats.NetworkSettings.Ports['4222/tcp']?.[0]?.HostIp).toBe(host2.address);

    // Host 1: its bridge is there and it still starts containers.
    expect(mainBridgeUp()).toBe(true);
    await mainEngineStartsContainers(natsImage);
  }, 400_000);

  it('doctor names the engine it checks', () => {
    const r = spawnSync(process.execPath, [cli, 'doctor', '--json', '--docker-host', host2.env.DOCKER_HOST], {
      encoding: 'utf8',
      env: cliEnv(),
      timeout: 120_000,
    });
    const report = JSON.parse(r.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> };
    const engine = report.checks.find((c) => c.name === 'docker engine');
    expect(engine, r.stdout).toMatchObject({ ok: true });
    expect(engine!.detail).toContain(`at ${host2.env.DOCKER_HOST}`);
  }, 150_000);

  it('--docker-host garbage is a usage error (exit 2); an engine that does not answer is named', () => {
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-hosts-bad-')), 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ final: 'nothing to do' }] }));
    const run = (hostUrl: string) =>
      spawnSync(
        process.execPath,
        [cli, 'run', 'x', '--repo', repo(), '--model', `scripted:${script}`, '--docker-host', hostUrl],
        { encoding: 'utf8', env: cliEnv(), timeout: 60_000 },
      );
    const garbage = run('not a docker host');
    expect(garbage.status, garbage.stderr).toBe(2);
    expect(garbage.stderr).toMatch(/--docker-host.*"not a docker host" is not a Docker host/s);
    expect(garbage.stderr).toContain('tcp://HOST:PORT');
    // Nothing listens on loopback port 1: refused at once.
    const down = run('tcp://127.0.0.1:1');
    expect(down.status, down.stderr).toBe(1);
    expect(down.stderr).toContain('cannot reach the Docker engine at tcp://127.0.0.1:1');
  }, 150_000);

  it('drives host 2 over ssh:// (its own sshd, agent key, host key checked): the sandbox runs there', async () => {
    const agent = await startSshAgent([host2.ssh.key]);
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true', SSH_AUTH_SOCK: agent.sock };
      for (const k of ['DOCKER_HOST', 'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH']) delete env[k];
      env.GATEHOUSE_SSH_KNOWN_HOSTS = host2.ssh.knownHosts;
      const { code, stdout, stderr, onHost1, onHost2 } = await runWatchingEngines(host2.ssh.url, env);
      expect(code, stderr).toBe(0);
      const last = stdout.trim().split('\n').at(-1)!;
      expect(JSON.parse(last)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      const sandboxId = /sandbox-id=([0-9a-f]{12})/.exec(stdout)?.[1];
      expect(sandboxId, stdout).toBeDefined();
      const sandbox = [...onHost2.keys()].find((id) => id.startsWith(sandboxId!));
      expect(sandbox, `host 2 listed ${[...onHost2.keys()].join(', ')}`).toBeDefined();
      // Over ssh:// the sandbox is bound through the archive API, and joins a holder as elsewhere.
      expect(['sandbox', 'network-holder']).toContain(onHost2.get(sandbox!));
      expect([...onHost2.values()]).toContain('sandbox');
      expect([...onHost1].some((id) => id.startsWith(sandboxId!))).toBe(false);

      // Another host key for that address (as if someone else answered there): refused, nothing runs.
      const wrong = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-hosts-known-')), 'known_hosts');
      const other = path.join(path.dirname(wrong), 'other');
      spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
      const otherPub = readFileSync(`${other}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
      writeFileSync(wrong, `${host2.address} ${otherPub}\n`);
      const script = path.join(path.dirname(wrong), 'script.json');
      writeFileSync(script, JSON.stringify({ turns: [{ final: 'nothing to do' }] }));
      const refused = spawnSync(
        process.execPath,
        [cli, 'run', 'x', '--repo', repo(), '--model', `scripted:${script}`, '--docker-host', host2.ssh.url],
        { encoding: 'utf8', env: { ...env, GATEHOUSE_SSH_KNOWN_HOSTS: wrong }, timeout: 60_000 },
      );
      expect(refused.status, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`cannot reach the Docker engine at ${host2.ssh.url}`);
    } finally {
      await agent.stop();
    }
  }, 400_000);
});
