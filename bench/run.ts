import { spawn } from 'node:child_process';
import { promises as fs, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { runtimeApproval, SandboxDriver, type Sandbox } from '@gatehouse/orchestrator';
import { benchEvents } from './events';
import { benchPipeline } from './pipeline';
import { benchPolicy } from './policy';
import { benchPolicyBatch } from './policy-batch';
import { benchPause } from './pause';
import { benchClassifier } from './classify';
import { benchFanout } from './fanout';
import { benchBoundary } from './boundary';
import { benchToolchain } from './toolchain';
import { benchCopyIn } from './copy-in';
import { benchSetupCache } from './setup-cache';
import { ratio, summarize, time } from './stats';
import { benchWarmPool, starts } from './warm-pool';
import { mergeResults } from './soak/results';

/**
 * `npm run bench`: sandbox start-up and daemon round trips, each beside the same work done by a
 * local spawn or `docker exec`, measured in the same run so the ratios compare like with like.
 * Prints JSON on stdout and keeps a copy in bench/results/latest.json.
 */
const N = { cold: Number(process.env.BENCH_COLD ?? 15), read: 500, exec: 300, dockerExec: 60 };

async function coldStarts(driver: SandboxDriver, repoDir: string) {
  const { total, phasesP50 } = await starts(driver, repoDir, N.cold);
  return { total, phases: phasesP50 };
}

function spawnTrue(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    c.on('error', reject);
    c.on('close', () => resolve());
  });
}

async function dockerExecTrue(driver: SandboxDriver, s: Sandbox): Promise<void> {
  const exec = await driver.docker
    .getContainer(s.info.containerId)
    .exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  await new Promise<void>((resolve) => {
    stream.on('end', () => resolve());
    stream.resume();
  });
}

async function main(): Promise<void> {
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  if (process.env.BENCH_ONLY === 'toolchain') {
    const driver = await SandboxDriver.start({});
    try {
      const toolchain = await benchToolchain(driver, path.resolve('examples', 'hello'), log);
      process.stdout.write(`${JSON.stringify({ toolchain }, null, 2)}\n`);
    } finally {
      await driver.close();
    }
    return;
  }
  if (process.env.BENCH_ONLY === 'warm-pool') {
    process.stdout.write(`${JSON.stringify({ warmPool: await benchWarmPool(log) }, null, 2)}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'setup-cache') {
    process.stdout.write(`${JSON.stringify({ setupCache: await benchSetupCache(log) }, null, 2)}\n`);
    return;
  }
  // First, before this process starts sandboxes of its own: it runs two checkouts' probes in turn.
  if (process.env.BENCH_ONLY === 'copy-in') {
    const driver = await SandboxDriver.start({});
    try {
      process.stdout.write(`${JSON.stringify({ copyIn: await benchCopyIn(driver, log) }, null, 2)}\n`);
    } finally {
      await driver.close();
    }
    return;
  }
  log('trust boundary: cold start and exec, before and after, alternating');
  const trustBoundary = await benchBoundary(log);
  if (process.env.BENCH_ONLY === 'boundary') {
    process.stdout.write(`${JSON.stringify({ trustBoundary }, null, 2)}\n`);
    return;
  }
  const driver = await SandboxDriver.start({});
  const repoDir = path.resolve('examples', 'hello'); // bench.sh runs from the repository root
  try {
    log(`cold start x${N.cold}`);
    const cold = await coldStarts(driver, repoDir);
    log('cold start: derived preset:python image against the default');
    const toolchain = await benchToolchain(driver, repoDir, log);

    const s = await driver.createSandbox({ runId: newId('run'), repoDir });
    const content = 'x'.repeat(4096);
    const write = { path: 'bench.txt', content };
    await s.invoke('write_file', write, { approval: runtimeApproval('write_file', write, 'bench') });
    const localFile = path.join(os.tmpdir(), `gh-bench-${process.pid}.txt`);
    writeFileSync(localFile, content);

    const read = { path: 'bench.txt' };
    const readApproval = runtimeApproval('read_file', read, 'bench');
    const exec = { command: 'true' };
    const execApproval = runtimeApproval('exec', exec, 'bench');
    for (let i = 0; i < 30; i++) await s.invoke('read_file', read, { approval: readApproval }); // warm-up

    log(`read_file x${N.read}`);
    const daemonRead = summarize(await time(N.read, () => s.invoke('read_file', read, { approval: readApproval })));
    const localRead = summarize(await time(N.read, () => fs.readFile(localFile)));
    log(`exec true x${N.exec}`);
    for (let i = 0; i < 20; i++) await s.invoke('exec', exec, { approval: execApproval });
    const daemonExec = summarize(await time(N.exec, () => s.invoke('exec', exec, { approval: execApproval })));
    const localBash = summarize(await time(N.exec, () => spawnTrue('/bin/bash', ['-c', 'true'])));
    const localTrue = summarize(await time(N.exec, () => spawnTrue('true', [])));
    log(`docker exec true x${N.dockerExec}`);
    const dockerExec = summarize(await time(N.dockerExec, () => dockerExecTrue(driver, s)));
    log('pipeline');
    const pipeline = await benchPipeline(s);
    // The rest is CPU-bound and synchronous for seconds at a time: no live sandbox should be
    // waiting for its heartbeats to be read meanwhile.
    await s.destroy();
    log('event store');
    const events = await benchEvents();
    log('policy and classifier');
    const policy = await benchPolicy();
    const classifier = await benchClassifier();
    const policyBatch = benchPolicyBatch();
    log('headless pause x5');
    const pause = await benchPause();
    log('fan-out');
    const fanout = await benchFanout();
    log('copy-in of 15,000 files');
    const copyIn = await benchCopyIn(driver, log);
    log('warm pool against the cold path');
    const warmPool = await benchWarmPool(log);
    log('run start: setup-cache hit against the first setup');
    const setupCache = await benchSetupCache(log);
    await fs.rm(localFile, { force: true });

    const report = {
      when: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.versions.node, docker: (await driver.docker.version()).Version },
      coldStartMs: { ...cold.total, phasesP50: cold.phases, target: 'p50 <= 400' },
      trustBoundary,
      toolchain,
      warmPool,
      readFileMs: {
        daemon: daemonRead,
        localRead,
        ratioDaemonToLocal: ratio(daemonRead.p50, localRead.p50),
        target: 'daemon p50 <= 1.5',
      },
      execTrueMs: {
        daemon: daemonExec,
        localSpawnBashC: localBash,
        localSpawnTrue: localTrue,
        dockerExec,
        ratioDaemonToLocalBashC: ratio(daemonExec.p50, localBash.p50),
        ratioDaemonToLocalTrue: ratio(daemonExec.p50, localTrue.p50),
        speedupOverDockerExec: ratio(dockerExec.p50, daemonExec.p50),
        target: 'daemon <= 1.5x local spawn; >= 20x faster than docker exec',
      },
      pipeline,
      events,
      policy,
      classifier: { ...classifier, target: '>= 10,000 commands/s' },
      policyBatch,
      pause,
      fanout,
      copyIn,
      setupCache,
    };
    // Merged, not overwritten: the soak's section (npm run soak) stays beside the bench's.
    mergeResults(path.resolve('bench', 'results', 'latest.json'), report);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await driver.close();
  }
}

await main();
