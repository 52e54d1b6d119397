import type { Command } from 'commander';
import { openQueue } from '../queue/open-queue';
import { pruneQueue } from '../queue/prune';
import type { StoreUrl } from '../store/index';
import { parseAge } from './runs';

interface PruneFlags {
  olderThan: string;
  dryRun?: boolean;
  store?: string;
  json?: boolean;
}

/** Default age for `queue prune`: a week, long enough to resubmit a failed run or read its record. */
export const DEFAULT_QUEUE_PRUNE_AGE = '7d';

async function queuePruneCommand(o: PruneFlags, storeUrl: (flag?: string) => StoreUrl): Promise<number> {
  const olderThanMs = parseAge(o.olderThan);
  const { nc, queue, installation } = await openQueue(storeUrl(o.store), { name: 'gatehouse queue prune' });
  try {
    const plan = await pruneQueue(nc, queue, installation, { olderThanMs, ...(o.dryRun ? { dryRun: true } : {}) });
    if (o.json) {
      process.stdout.write(`${JSON.stringify({ dryRun: Boolean(o.dryRun), ...plan })}\n`);
      return 0;
    }
    const verb = o.dryRun ? 'would remove' : 'removed';
    const lines = [
      `${verb} ${plan.snapshots.length} snapshot(s) and ${plan.records.length} run record(s) ` +
        `(ended runs older than ${o.olderThan}; live and paused runs are kept)`,
      ...plan.snapshots.map((s) => `  snapshot ${s.name}: ${s.why}`),
      ...plan.records.map((r) => `  record ${r.runId}: ${r.why}`),
      ...plan.kept.map((k) => `  kept ${k.runId}: ${k.why}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await nc.close();
  }
}

/** `gatehouse queue prune`: the queue's retention (docs/queue.md, Retention). */
export function registerQueuePrune(program: Command, storeHelp: string, storeUrl: (flag?: string) => StoreUrl): void {
  program
    .command('queue')
    .description("the run queue's upkeep")
    .command('prune')
    .description(
      'remove snapshots of completed runs, and records and snapshots of runs ended longer ago than an age; ' +
        'queued, running and paused runs are kept',
    )
    .option('--older-than <age>', 'a whole number and d, h or m: 7d, 12h, 30m', DEFAULT_QUEUE_PRUNE_AGE)
    .option('--dry-run', 'only list what would be removed')
    .option('--store <url>', storeHelp)
    .option('--json', 'print the report as JSON')
    .action(async (o: PruneFlags) => {
      process.exitCode = await queuePruneCommand(o, storeUrl);
    });
}
