import type { Command } from 'commander';
import { isExpired, type MemoryRecord } from '../memory/memory-record';
import { MemoryStore, type RefusedRecord } from '../memory/memory-store';
import { repositoryIdentity } from '../memory/repository-identity';
import { parseRepo } from './option-parsers';
import { parseAge } from './runs';
import { UsageError } from './usage';

interface StoreFlags {
  stateDir?: string;
  json?: boolean;
}

const refusedLines = (refused: readonly RefusedRecord[]): string =>
  refused
    .map(
      (r) =>
        `gatehouse: memory record ${r.file} refused (never used): ${r.reason}; ` +
        'remove it with gatehouse memory forget\n',
    )
    .join('');

function line(r: MemoryRecord, now: number): string {
  const state = isExpired(r, now) ? 'expired' : `expires ${r.expiresAt.slice(0, 10)}`;
  const text = r.text.replace(/\s+/g, ' ').slice(0, 100);
  return `${r.id}  ${r.scope.padEnd(10)} ${r.confidence.padEnd(6)} ${state}  from ${r.source.runId}  ${text}`;
}

/** `gatehouse memory list`: this repository's records and the user's (`--all`: every record). */
async function listCommand(o: StoreFlags & { repo: string; all?: boolean }): Promise<number> {
  const store = MemoryStore.forInstallation({ stateDir: o.stateDir });
  const { records, refused } = store.read();
  const repository = (await repositoryIdentity(o.repo)).id;
  const shown = o.all ? records : records.filter((r) => r.scope === 'user' || r.repository === repository);
  const now = Date.now();
  if (o.json) process.stdout.write(`${JSON.stringify({ repository, records: shown, refused })}\n`);
  else if (shown.length === 0)
    process.stdout.write(`no memory records${o.all ? '' : ' for this repository'} in ${store.dir}\n`);
  else process.stdout.write(shown.map((r) => `${line(r, now)}\n`).join(''));
  process.stderr.write(refusedLines(refused));
  return refused.length > 0 ? 1 : 0;
}

function showCommand(id: string, o: StoreFlags): number {
  const r = MemoryStore.forInstallation({ stateDir: o.stateDir }).get(id);
  if (r.kind === 'missing') throw new UsageError(`no memory record ${id}: see gatehouse memory list --all`);
  if (r.kind === 'refused') {
    process.stderr.write(refusedLines([r.refused]));
    return 1;
  }
  const m = r.record;
  if (o.json) {
    process.stdout.write(`${JSON.stringify(m)}\n`);
    return 0;
  }
  process.stdout.write(
    [
      `${m.id} (${m.scope}${m.repository ? ` of repository ${m.repository}` : ''}, confidence ${m.confidence})`,
      `  ${m.text}`,
      `  from run ${m.source.runId}, approved by ${m.approvedBy}; verified: ${m.verified}`,
      `  created ${m.createdAt}, ${isExpired(m) ? 'expired' : 'expires'} ${m.expiresAt}`,
      ...m.source.citations.map((c) => `  ${c.observationId}: "${c.quote}"`),
      `  (gatehouse show ${m.source.runId} --output shows the observations)`,
    ].join('\n') + '\n',
  );
  return 0;
}

function forgetCommand(id: string, o: StoreFlags): number {
  if (!MemoryStore.forInstallation({ stateDir: o.stateDir }).forget(id))
    throw new UsageError(`no memory record ${id}: see gatehouse memory list --all`);
  process.stdout.write(`forgot ${id}\n`);
  return 0;
}

/** Removes expired records, and with --older-than those created longer ago than that. */
function expireCommand(o: StoreFlags & { olderThan?: string; dryRun?: boolean }): number {
  const maxAgeMs = o.olderThan !== undefined ? parseAge(o.olderThan) : undefined;
  const store = MemoryStore.forInstallation({ stateDir: o.stateDir });
  const { records, refused } = store.read();
  const now = Date.now();
  const gone = records.filter(
    (r) => isExpired(r, now) || (maxAgeMs !== undefined && now - Date.parse(r.createdAt) > maxAgeMs),
  );
  if (!o.dryRun) for (const r of gone) store.forget(r.id);
  const verb = o.dryRun ? 'would remove' : 'removed';
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ [o.dryRun ? 'wouldRemove' : 'removed']: gone.map((r) => r.id), refused })}\n`,
    );
  else
    process.stdout.write(
      `${verb} ${gone.length} record(s)${gone.length ? `: ${gone.map((r) => r.id).join(', ')}` : ''}\n`,
    );
  process.stderr.write(refusedLines(refused));
  return 0;
}

/** `gatehouse memory list|show|forget|expire` (docs/memory.md). */
export function registerMemoryCommands(program: Command, h: { stateDirHelp: string }): void {
  const memory = program
    .command('memory')
    .description('records remembered across runs (gatehouse run --memory): list, show, forget, expire');
  memory
    .command('list')
    .description("this repository's records and the user's (--all: every record); refused (tampered) files exit 1")
    .option('--repo <dir>', 'the repository whose records to list', parseRepo, '.')
    .option('--all', 'every record, of every repository')
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--json', 'print as JSON')
    .action(async (o: Parameters<typeof listCommand>[0]) => {
      process.exitCode = await listCommand(o);
    });
  memory
    .command('show')
    .description('one record with its provenance: run, observations, quotes, approver')
    .argument('<id>', 'record id (mem_…)')
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--json', 'print as JSON')
    .action((id: string, o: StoreFlags) => {
      process.exitCode = showCommand(id, o);
    });
  memory
    .command('forget')
    .description('remove a record (a refused one too)')
    .argument('<id>', 'record id (mem_…)')
    .option('--state-dir <dir>', h.stateDirHelp)
    .action((id: string, o: StoreFlags) => {
      process.exitCode = forgetCommand(id, o);
    });
  memory
    .command('expire')
    .description('remove expired records; with --older-than, also those created longer ago than that')
    .option('--older-than <age>', 'a whole number and d, h or m: 90d, 12h, 30m')
    .option('--dry-run', 'only list what would be removed')
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--json', 'print as JSON')
    .action((o: Parameters<typeof expireCommand>[0]) => {
      process.exitCode = expireCommand(o);
    });
}
