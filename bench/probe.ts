import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { runtimeApproval, SandboxDriver } from '@gatehouse/orchestrator';
import { summarize, time } from './stats';

/**
 * The sandbox's two costs the trust boundary could make worse — cold start and a daemon round trip
 * that spawns a command — measured with only the API every version of gatehouse has, so the same
 * file can be bundled against an older checkout and the two compared in one bench run
 * (bench/boundary.ts). Prints one JSON object on stdout.
 */
const cold = Number(process.env.PROBE_COLD ?? 10);
const execs = Number(process.env.PROBE_EXEC ?? 200);

const driver = await SandboxDriver.start({});
try {
  const repoDir = path.resolve(process.env.PROBE_REPO ?? path.join('examples', 'hello'));
  const starts = await time(cold, async () => {
    const s = await driver.createSandbox({ runId: newId('run'), repoDir });
    await s.destroy();
  });
  const s = await driver.createSandbox({ runId: newId('run'), repoDir });
  const exec = { command: 'true' };
  const approval = runtimeApproval('exec', exec, 'bench');
  for (let i = 0; i < 20; i++) await s.invoke('exec', exec, { approval });
  // The daemon's own time for each call (from the message's arrival to its result): what the
  // round trip spends inside the sandbox, apart from NATS and the orchestrator.
  const execDaemon: number[] = [];
  const execTimes = await time(execs, async () =>
    execDaemon.push((await s.invoke('exec', exec, { approval })).durationMs),
  );
  const read = { path: 'README.md' };
  const readApproval = runtimeApproval('read_file', read, 'bench');
  const readTimes = await time(execs, () => s.invoke('read_file', read, { approval: readApproval }));
  await s.destroy();
  const samples = { coldStartMs: starts, execTrueMs: execTimes, readFileMs: readTimes, execInDaemonMs: execDaemon };
  const summary = {
    coldStartMs: summarize(starts),
    execTrueMs: summarize(execTimes),
    readFileMs: summarize(readTimes),
    execInDaemonMs: summarize(execDaemon),
  };
  process.stdout.write(`${JSON.stringify({ summary, samples })}\n`);
} finally {
  await driver.close();
}
