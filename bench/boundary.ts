import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { docker } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

/**
 * Issue 10's budget: the trust boundary (two users in the sandbox, signed invocations, path rules
 * in the file system) may cost at most 10 % of cold start and of a daemon round trip that spawns a
 * command. Measured in one bench run against the last commit before that work: the same probe
 * (bench/probe.ts) bundled against both checkouts, run alternately so drift on a busy machine
 * falls on both sides alike, samples pooled per side.
 */
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? '456e4934dc55ceee2bcf87369f35f21e6279eda6';
const ROUNDS = Number(process.env.BENCH_BOUNDARY_ROUNDS ?? 3);

type Samples = Record<'coldStartMs' | 'execTrueMs' | 'readFileMs' | 'execInDaemonMs', number[]>;

export async function benchBoundary(log: (m: string) => void): Promise<Record<string, unknown>> {
  const root = process.cwd();
  const baseline = execFileSync('bash', ['scripts/bench-baseline.sh', BASELINE_REF], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const sides = { before: baseline, after: root };
  const pooled: Record<keyof typeof sides, Samples> = { before: empty(), after: empty() };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of ['before', 'after'] as const) {
      log(`boundary: round ${round + 1}/${ROUNDS}, ${side}`);
      // Each checkout builds its own sandbox image and removes the other's as superseded; keeping a
      // second tag on every image makes the removal an untag, undone here in a moment.
      await restoreTags();
      const out = await probe(sides[side]);
      await keepTags();
      for (const k of Object.keys(out) as Array<keyof Samples>) pooled[side][k].push(...out[k]);
    }
  }
  await restoreTags();
  const figure = (k: keyof Samples) => {
    const before = summarize(pooled.before[k]);
    const after = summarize(pooled.after[k]);
    return { before, after, ratioAfterToBefore: ratio(after.p50, before.p50) };
  };
  return {
    baseline: BASELINE_REF,
    rounds: ROUNDS,
    coldStartMs: figure('coldStartMs'),
    execTrueMs: figure('execTrueMs'),
    readFileMs: figure('readFileMs'),
    execInDaemonMs: figure('execInDaemonMs'),
    target: 'cold start and exec: ratioAfterToBefore <= 1.10',
  };
}

function empty(): Samples {
  return { coldStartMs: [], execTrueMs: [], readFileMs: [], execInDaemonMs: [] };
}

function probe(checkout: string): Promise<Samples> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(checkout, 'bench', 'dist', 'probe.mjs')], {
      cwd: checkout,
      env: {
        ...process.env,
        PROBE_COLD: process.env.BENCH_BOUNDARY_COLD ?? '5',
        PROBE_EXEC: '150',
        PROBE_REPO: path.join(checkout, 'examples', 'hello'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`probe in ${checkout} exited with ${code}`));
      resolve((JSON.parse(out) as { samples: Samples }).samples);
    });
  });
}

const KEEP = 'gatehouse-bench-keep';

async function keepTags(): Promise<void> {
  const d = docker();
  for (const image of await d.listImages({ filters: { reference: ['gatehouse/*'] } })) {
    for (const t of image.RepoTags ?? []) {
      const [repo, tag] = t.split(':');
      if (repo && tag && tag !== 'latest') await d.getImage(t).tag({ repo: `${KEEP}/${repo.replace('/', '-')}`, tag });
    }
  }
}

async function restoreTags(): Promise<void> {
  const d = docker();
  for (const image of await d.listImages({ filters: { reference: [`${KEEP}/*`] } })) {
    for (const t of image.RepoTags ?? []) {
      const [repo, tag] = t.split(':');
      if (!repo || !tag) continue;
      await d.getImage(t).tag({ repo: repo.slice(KEEP.length + 1).replace('-', '/'), tag });
    }
  }
}
