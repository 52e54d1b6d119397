import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { ratio, summarize } from './stats';

/**
 * Sub-agent fan-out through the real CLI bundle, real sandboxes and scripted models: the wall time
 * of a parent that delegates to one child (list_files, then a final answer) beside a parent that
 * delegates to eight such children in one turn, and the memory of the child sandboxes, sampled
 * every ~200 ms while the eight-child run goes. The parent runs at most `maxParallel` children at
 * once (4 by default, orchestrator/src/run/drive.ts), so eight children run in two waves.
 */
const RUN_TIMEOUT_MS = 240_000;
const SAMPLE_EVERY_MS = 200;
const MAX_SAMPLES = Math.ceil(RUN_TIMEOUT_MS / SAMPLE_EVERY_MS);
const DEFAULT_MAX_PARALLEL = 4;

const handoff = (i: number) => ({
  name: 'delegate',
  input: {
    task: `list the workspace root (child ${i})`,
    tools: ['list_files'],
    paths: ['**'],
    evidence: [],
    budget: { turns: 3, toolCalls: 3, tokens: 100000, seconds: 120 },
    expect: 'how many entries the root holds',
  },
});
const childScript = {
  turns: [{ toolCalls: [{ name: 'list_files', input: { path: '.' } }] }, { final: 'listed the root (obs-1)' }],
};
const parentScript = (children: number) => ({
  turns: [
    { text: `${children} sub-agent(s).`, toolCalls: Array.from({ length: children }, (_, i) => handoff(i)) },
    { final: 'the sub-agents listed the root' },
  ],
  children: Array.from({ length: children }, () => childScript),
});

interface Event {
  type: string;
  runId: string;
  parentRunId: string | null;
  ts: string;
  data: Record<string, unknown>;
}

interface Peak {
  runId: string;
  /** Highest working set seen (usage minus inactive file cache, as `docker stats` shows it). */
  workingSetMB: number;
  /** The kernel's own high-water mark for the container (cgroup v1 max_usage, page cache included), when reported. */
  kernelMaxUsageMB: number | null;
  samples: number;
}

interface RunResult {
  wallMs: number;
  exitCode: number | null;
  rootRunId: string | null;
  childrenFinal: number;
  /** Most children running at the same time, from the parent's agent.spawned / agent.completed. */
  maxConcurrentChildren: number;
  /** First agent.spawned to last agent.completed in the parent's log. */
  childPhaseMs: number | null;
  childMs: number[];
  peaks: Map<string, Peak>;
  sampleRounds: number;
  /** Most child sandboxes seen alive in one sampling round. */
  maxChildSandboxesAlive: number;
  /** Memory readings taken from cgroup files, and API requests started. */
  sources: { cgroup: number; api: number };
}

const MB = 1024 * 1024;
const round = (x: number) => Math.round(x * 10) / 10;

interface MemorySample {
  /** Bytes in use minus the inactive file cache: the figure `docker stats` shows. */
  workingSet: number;
  /** The cgroup's high-water mark (page cache included), when the kernel keeps one. */
  max: number | null;
}

function readNumber(file: string): number | null {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

function statField(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${key} `));
    return line ? Number(line.slice(key.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}

/**
 * The container's memory from its cgroup files, where the engine runs on this host (instant, and
 * what `docker stats` itself reads): cgroup v1 with the cgroupfs driver, or v2 (systemd or cgroupfs).
 */
function cgroupMemory(id: string): MemorySample | null {
  const v1 = `/sys/fs/cgroup/memory/docker/${id}`;
  const usage1 = readNumber(`${v1}/memory.usage_in_bytes`);
  if (usage1 !== null)
    return {
      workingSet: usage1 - statField(`${v1}/memory.stat`, 'total_inactive_file'),
      max: readNumber(`${v1}/memory.max_usage_in_bytes`),
    };
  for (const v2 of [`/sys/fs/cgroup/system.slice/docker-${id}.scope`, `/sys/fs/cgroup/docker/${id}`]) {
    const usage2 = readNumber(`${v2}/memory.current`);
    if (usage2 !== null)
      return {
        workingSet: usage2 - statField(`${v2}/memory.stat`, 'inactive_file'),
        max: readNumber(`${v2}/memory.peak`),
      };
  }
  return null;
}

/** The same through the engine's API: one-shot stats (which take most of a second on some engines). */
async function apiMemory(docker: Docker, id: string): Promise<MemorySample | null> {
  const s = await docker.getContainer(id).stats({ stream: false, 'one-shot': true });
  const m = s.memory_stats as { usage?: number; max_usage?: number; stats?: Record<string, number> } | undefined;
  if (!m?.usage) return null; // a container still starting or already stopping reports nothing
  return {
    workingSet: m.usage - (m.stats?.total_inactive_file ?? m.stats?.inactive_file ?? 0),
    max: m.max_usage ?? null,
  };
}

const MAX_IN_FLIGHT = 4;

/**
 * Samples, every ~200 ms, the memory of the sandboxes the given orchestrator process owns, until
 * `stop()`. Reads cgroup files when it can; otherwise API requests are started on the same cadence
 * without waiting for the previous one (at most MAX_IN_FLIGHT per container), since one takes
 * longer than a sampling period and a child's sandbox lives only a second or two.
 */
function sampleSandboxes(docker: Docker, ownerPid: () => number | undefined) {
  const peaks = new Map<string, Peak>();
  const sources = { cgroup: 0, api: 0 };
  let stopped = false;
  let rounds = 0;
  /** Run labels of the sandboxes alive in each round. */
  const alive: string[][] = [];
  const inFlight = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const record = (name: string, runId: string, m: MemorySample | null) => {
    if (!m) return;
    const p = peaks.get(name) ?? { runId, workingSetMB: 0, kernelMaxUsageMB: null, samples: 0 };
    p.workingSetMB = Math.max(p.workingSetMB, round(m.workingSet / MB));
    if (m.max !== null) p.kernelMaxUsageMB = Math.max(p.kernelMaxUsageMB ?? 0, round(m.max / MB));
    p.samples++;
    peaks.set(name, p);
  };
  const done = (async () => {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (!stopped && rounds < MAX_SAMPLES && Date.now() < deadline) {
      const t0 = Date.now();
      rounds++;
      const pid = ownerPid();
      try {
        const list = await docker.listContainers({ filters: { label: ['gatehouse.role=sandbox'] } });
        // Only this run's sandboxes: the owner label is host:pid:starttime of the orchestrator process.
        const mine = list.filter(
          (c) => pid !== undefined && c.Labels['gatehouse.owner']?.split(':')[1] === String(pid),
        );
        alive.push(mine.map((c) => c.Labels['gatehouse.run'] ?? '?'));
        for (const c of mine) {
          const name = c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12);
          const runId = c.Labels['gatehouse.run'] ?? '?';
          const fast = cgroupMemory(c.Id);
          if (fast) {
            sources.cgroup++;
            record(name, runId, fast);
            continue;
          }
          if ((inFlight.get(c.Id) ?? 0) >= MAX_IN_FLIGHT) continue;
          inFlight.set(c.Id, (inFlight.get(c.Id) ?? 0) + 1);
          sources.api++;
          const req: Promise<void> = apiMemory(docker, c.Id)
            .then((m) => record(name, runId, m))
            .catch(() => undefined) // gone between the list and the stats call
            .finally(() => {
              inFlight.set(c.Id, (inFlight.get(c.Id) ?? 1) - 1);
              pending.delete(req);
            });
          pending.add(req);
        }
      } catch {
        // Docker busy: try again next round.
      }
      const wait = SAMPLE_EVERY_MS - (Date.now() - t0);
      if (wait > 0 && !stopped) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      await Promise.all([...pending]);
      return { peaks, rounds, alive, sources };
    },
  };
}

async function runOnce(repo: string, script: string, stateDir: string, docker: Docker | null): Promise<RunResult> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      'orchestrator/bin/gatehouse.mjs',
      'run',
      'fan out',
      '--repo',
      repo,
      '--model',
      `scripted:${script}`,
      '--mode',
      'sandboxed-auto',
      '--json',
      '--state-dir',
      stateDir,
    ],
    { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const sampler = docker ? sampleSandboxes(docker, () => child.pid) : null;
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const wallMs = performance.now() - t0;
  const sampled = sampler
    ? await sampler.stop()
    : { peaks: new Map<string, Peak>(), rounds: 0, alive: [] as string[][], sources: { cgroup: 0, api: 0 } };
  if (exitCode === null)
    spawnSync(process.execPath, ['orchestrator/bin/gatehouse.mjs', 'sandbox', 'reap'], {
      stdio: 'ignore',
      timeout: 60_000,
    });

  const events: Event[] = [];
  for (const line of buffer.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as Event);
    } catch {
      // a line cut by a kill
    }
  }
  const rootRunId = events.find((e) => e.parentRunId === null)?.runId ?? null;
  const parent = events.filter((e) => e.runId === rootRunId);
  let running = 0;
  let maxConcurrentChildren = 0;
  const spawnedAt = new Map<string, number>();
  const childMs: number[] = [];
  for (const e of parent) {
    if (e.type === 'agent.spawned') {
      spawnedAt.set(String(e.data.childRunId), Date.parse(e.ts));
      maxConcurrentChildren = Math.max(maxConcurrentChildren, ++running);
    } else if (e.type === 'agent.completed') {
      running--;
      const at = spawnedAt.get(String(e.data.childRunId));
      if (at !== undefined) childMs.push(Date.parse(e.ts) - at);
    }
  }
  const firstSpawn = parent.find((e) => e.type === 'agent.spawned');
  const lastDone = parent.filter((e) => e.type === 'agent.completed').at(-1);
  // Only the children's sandboxes count, not the parent's.
  const peaks = new Map([...sampled.peaks].filter(([, p]) => p.runId !== rootRunId));
  return {
    wallMs,
    exitCode,
    rootRunId,
    childrenFinal: parent.filter((e) => e.type === 'agent.completed' && e.data.status === 'final').length,
    maxConcurrentChildren,
    childPhaseMs: firstSpawn && lastDone ? Date.parse(lastDone.ts) - Date.parse(firstSpawn.ts) : null,
    childMs,
    peaks,
    sampleRounds: sampled.rounds,
    sources: sampled.sources,
    maxChildSandboxesAlive: sampled.alive.reduce(
      (n, round) => Math.max(n, round.filter((r) => r !== rootRunId).length),
      0,
    ),
  };
}

/** Runs from the repository root (like bench/run.ts): the CLI is orchestrator/bin/gatehouse.mjs. */
export async function benchFanout(runs = 2): Promise<Record<string, unknown>> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-fanout-'));
  const docker = new Docker();
  try {
    const repo = path.join(tmp, 'repo');
    mkdirSync(path.join(repo, 'src'), { recursive: true });
    writeFileSync(path.join(repo, 'README.md'), '# fan-out\n');
    writeFileSync(path.join(repo, 'src', 'a.txt'), 'a\n');
    const one = path.join(tmp, 'one.json');
    const eight = path.join(tmp, 'eight.json');
    writeFileSync(one, JSON.stringify(parentScript(1)));
    writeFileSync(eight, JSON.stringify(parentScript(8)));

    const oneRuns: RunResult[] = [];
    const eightRuns: RunResult[] = [];
    for (let i = 0; i < runs; i++) {
      oneRuns.push(await runOnce(repo, one, path.join(tmp, `state-1-${i}`), null));
      eightRuns.push(await runOnce(repo, eight, path.join(tmp, `state-8-${i}`), docker));
    }
    const oneWall = summarize(oneRuns.map((r) => r.wallMs));
    const eightWall = summarize(eightRuns.map((r) => r.wallMs));
    const perContainer = eightRuns.flatMap((r) => [...r.peaks.values()]);
    const ws = perContainer.map((p) => p.workingSetMB);
    const kernel = perContainer.flatMap((p) => (p.kernelMaxUsageMB === null ? [] : [p.kernelMaxUsageMB]));
    const describe = (r: RunResult) => ({
      wallMs: Math.round(r.wallMs),
      exitCode: r.exitCode,
      childrenFinal: r.childrenFinal,
      maxConcurrentChildren: r.maxConcurrentChildren,
      childPhaseMs: r.childPhaseMs,
      childMsP50: summarize(r.childMs).p50,
    });
    return {
      runs,
      oneChild: { wallMs: oneWall, each: oneRuns.map(describe) },
      eightChildren: {
        wallMs: eightWall,
        each: eightRuns.map((r) => ({
          ...describe(r),
          sampleRounds: r.sampleRounds,
          memoryReadings: r.sources,
          maxChildSandboxesAlive: r.maxChildSandboxesAlive,
          childSandboxesSampled: r.peaks.size,
        })),
      },
      ratioEightToOne: ratio(eightWall.p50, oneWall.p50),
      maxParallelChildren: DEFAULT_MAX_PARALLEL,
      childSandboxMemoryMB: {
        peakWorkingSetPerContainer: ws.length > 0 ? summarize(ws) : null,
        kernelMaxUsagePerContainer: kernel.length > 0 ? summarize(kernel) : null,
        sampledEveryMs: SAMPLE_EVERY_MS,
        note:
          'working set = usage minus inactive file cache (what docker stats shows), sampled; kernel max usage = ' +
          'cgroup high-water mark, page cache included',
      },
      target:
        'eight children in one turn <= 3x one child (default maxParallel 4: two waves); <= 64 MB per idle ' +
        'child sandbox',
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
