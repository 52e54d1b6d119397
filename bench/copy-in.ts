import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import tar from 'tar-fs';
import { ownerLabel } from '@gatehouse/shared';
import { copyRepository, LABEL, listRepository, type SandboxDriver } from '@gatehouse/orchestrator';
import { ratio, summarize } from './stats';

const FILES = 15_000;
const ROUNDS = Number(process.env.BENCH_COPY_ROUNDS ?? 5);

/**
 * Issue 12: a repository of 15,000 small files copies in within 2 s. Each sample copies into a
 * fresh container with a fresh /workspace volume, as a sandbox start does; the baseline, measured
 * in the same run and alternating with it, is the previous implementation (tar-fs packing the
 * whole tree into the same archive API). The repository also holds an ignored node_modules of
 * 5,000 files, which the new copy leaves out and the baseline copies. `packOnly` separates the
 * host's share (listing and packing, archive read to nowhere) from Docker's (extracting it).
 */
export async function benchCopyIn(driver: SandboxDriver, log: (m: string) => void): Promise<Record<string, unknown>> {
  const repo = makeTree();
  try {
    const now: number[] = [];
    const before: number[] = [];
    const ram: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      log(`copy-in: round ${round + 1}/${ROUNDS}`);
      now.push(await inFreshContainer(driver, (c) => copyRepository(c, repo, {})));
      // The same copy into a workspace backed by memory (what `limits.diskMb` gives): Docker's disk is out of it.
      ram.push(await inFreshContainer(driver, (c) => copyRepository(c, repo, {}), { tmpfsBytes: 1024 ** 3 }));
      before.push(await inFreshContainer(driver, (c) => c.putArchive(bridge(tar.pack(repo)), { path: '/workspace' })));
    }
    // The host's share alone: the same archive produced and read to nowhere.
    const nowhere = { putArchive: (s: NodeJS.ReadableStream) => drain(s) } as unknown as Docker.Container;
    const packNow: number[] = [];
    const packBefore: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      packNow.push(await timed(() => copyRepository(nowhere, repo, {}).then(() => undefined)));
      packBefore.push(await timed(() => drain(bridge(tar.pack(repo)))));
    }
    const n = summarize(now);
    const b = summarize(before);
    const copied = (await listRepository(repo)).entries.length;
    return {
      files: FILES,
      copiedEntries: copied,
      ignoredNodeModulesFiles: 5_000,
      copyRepositoryMs: n,
      baselineTarFsWholeTreeMs: b,
      ratioToBaseline: ratio(n.p50, b.p50),
      copyRepositoryIntoMemoryBackedWorkspaceMs: summarize(ram),
      hostShareMs: { copyRepositoryToNowhere: summarize(packNow), baselineTarFsToNowhere: summarize(packBefore) },
      target: 'p50 <= 2000 ms for 15,000 files',
    };
  } finally {
    rmSync(repo, { recursive: true, force: true, maxRetries: 5 });
  }
}

function makeTree(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-copy-'));
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, 'src', `m${i % 150}`, `p${i % 7}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.ts`), `export const v${i} = ${i};\n`);
  }
  for (let i = 0; i < 5_000; i++) {
    const dir = path.join(root, 'node_modules', `pkg${i % 100}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `i${i}.js`), `module.exports = ${i};\n`);
  }
  writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'gc.auto=0', '-c', 'user.email=bench@gatehouse', '-c', 'user.name=bench', 'commit', '-qm', 'bench');
  // Packed, as a real repository's objects mostly are (15,000 loose objects would double the copy).
  git('repack', '-a', '-d', '-q');
  git('prune-packed');
  return root;
}

async function inFreshContainer(
  driver: SandboxDriver,
  copy: (c: Docker.Container) => Promise<unknown>,
  opts: { tmpfsBytes?: number } = {},
) {
  const driverOptions: Record<string, string> = opts.tmpfsBytes
    ? { type: 'tmpfs', device: 'tmpfs', o: `size=${opts.tmpfsBytes},uid=10001,gid=10001,mode=0755` }
    : {};
  const options: Docker.ContainerCreateOptions = {
    Image: driver.images.sandbox,
    Entrypoint: ['sleep'],
    Cmd: ['300'],
    // The owner label keeps reapers (this one's and other checkouts') off a live bench container.
    Labels: { [LABEL.role]: 'sandbox', [LABEL.owner]: ownerLabel(), [LABEL.run]: 'bench-copy-in' },
    NetworkDisabled: true,
    HostConfig: {
      Mounts: [
        {
          Type: 'volume',
          Source: '',
          Target: '/workspace',
          VolumeOptions: {
            NoCopy: false,
            Labels: { [LABEL.run]: 'bench-copy-in' },
            DriverConfig: { Name: 'local', Options: driverOptions },
          },
        },
      ],
    },
  };
  const c = await driver.docker.createContainer(options);
  try {
    await c.start();
    return await timed(() => copy(c).then(() => undefined));
  } finally {
    await c.remove({ force: true, v: true });
  }
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function bridge(source: { pipe(d: NodeJS.WritableStream): unknown; on(e: 'error', f: (e: Error) => void): unknown }) {
  const out = new PassThrough();
  source.on('error', (e) => out.destroy(e));
  source.pipe(out);
  return out;
}

function drain(s: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    s.on('data', () => undefined);
    s.on('end', () => resolve());
    s.on('error', reject);
  });
}
