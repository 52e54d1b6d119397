import { existsSync } from 'node:fs';
import path from 'node:path';
import { EVENTS_FILE, InvalidRunIdError, listRuns, resolveStateDir, runDir, verifyLog, type BadEvent } from '../events/index';

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** What a bad line means for the person reading the report. */
function meaning(bad: BadEvent): string {
  if (bad.reason.startsWith('torn last line') || bad.reason.includes('torn write')) {
    return 'the last write did not complete (the process was killed or the machine lost power mid-write). Every event before it is intact; resuming the run cuts the partial line off.';
  }
  return `the log was modified after it was written (or the disk corrupted it). Events before line ${bad.line} verified; from line ${bad.line} on nothing can be trusted, and gatehouse refuses to resume this run.`;
}

/** `gatehouse verify RUN`: check a run's hash chain. Exit 0 intact, 1 tampered or torn, 2 usage. */
export async function verify(run: string, opts: { stateDir?: string; json?: boolean }): Promise<number> {
  const stateDir = resolveStateDir(opts.stateDir);
  let file: string;
  try {
    file = path.join(runDir(stateDir, run), EVENTS_FILE);
  } catch (e) {
    if (e instanceof InvalidRunIdError) {
      process.stderr.write(`gatehouse verify: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  if (!existsSync(file)) {
    const runs = listRuns(stateDir).map((r) => r.runId);
    process.stderr.write(
      `gatehouse verify: unknown run ${JSON.stringify(run)} in ${stateDir}. ` +
        (runs.length > 0 ? `Runs there: ${runs.join(', ')}.\n` : 'There are no runs there (use --state-dir or GATEHOUSE_STATE_DIR to point elsewhere).\n'),
    );
    return EXIT.usage;
  }

  const result = verifyLog(file);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ runId: run, file, ...result, ...(result.firstBad ? { meaning: meaning(result.firstBad) } : {}) })}\n`);
  } else if (result.ok) {
    process.stdout.write(`ok: run ${run}: ${result.events} events, hash chain intact${result.lastHash ? ` (last hash ${result.lastHash})` : ''}\n`);
  } else {
    const bad = result.firstBad!;
    const which = [bad.seq !== undefined ? `seq ${bad.seq}` : null, bad.id ? `id ${bad.id}` : null].filter(Boolean).join(', ');
    process.stdout.write(
      `FAILED: run ${run}: first bad event at line ${bad.line}${which ? ` (${which})` : ''} of ${file}\n` +
        `  ${bad.reason}\n` +
        `  meaning: ${meaning(bad)}\n` +
        `  ${result.events} event${result.events === 1 ? '' : 's'} before it verified.\n`,
    );
  }
  return result.ok ? EXIT.ok : EXIT.failed;
}
