import type { AuditReport } from './audit';
import type { BadEvent } from './verify';

/**
 * The words of an audit (audit.ts) for a person: what a bad line means, and one line per check.
 * `gatehouse verify` prints them and the report shows them, so both say the same.
 */

/** What a bad line means for the person reading the report. */
export function badEventMeaning(bad: BadEvent): string {
  if (bad.reason.startsWith('torn last line') || bad.reason.includes('torn write')) {
    return (
      'the last write did not complete (the process was killed or the machine lost power mid-write). ' +
      'Every event before it is intact; resuming the run cuts the partial line off.'
    );
  }
  if (bad.reason.startsWith('cut tail')) {
    return (
      'events were removed from the end of the log after they were written. ' +
      `Events before line ${bad.line} verified; gatehouse refuses to resume this run.`
    );
  }
  if (bad.reason.startsWith('schemaVersion ')) {
    return (
      `from line ${bad.line} on, the log is in a newer format than this gatehouse reads: nothing says it was ` +
      'modified, but this gatehouse cannot check it, nor show or resume the run. Verify it with a newer gatehouse.'
    );
  }
  if (bad.reason.startsWith('artifact')) {
    return 'a stored output was changed or removed after the event that records it was written.';
  }
  return (
    `the log was modified after it was written (or the disk corrupted it). Events before line ${bad.line} verified; ` +
    `from line ${bad.line} on nothing can be trusted, and gatehouse refuses to resume this run.`
  );
}

/** `1 event`, `2 events`. */
export const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/** One line per check: what was checked and what it showed. */
export function auditCheckLines(r: AuditReport): string[] {
  const out: string[] = [];
  // A cut tail or a bad artifact leaves the chain itself sound.
  const broken = r.firstBad && !r.firstBad.reason.startsWith('cut tail') && !r.firstBad.reason.startsWith('artifact');
  out.push(`chain: ${broken ? `broken at line ${r.firstBad!.line}` : 'intact'}, ${plural(r.events, 'event')} verified`);
  const m = r.macs;
  const foreign = Object.values(m.foreign).reduce((a, b) => a + b, 0);
  out.push(
    r.key
      ? `keyed MACs: ${m.verified} verified with this installation's key (id ${r.key.id})` +
          (m.unkeyed ? `, ${m.unkeyed} old-format without MAC` : '') +
          (foreign ? `, ${foreign} of another installation's key` : '')
      : 'keyed MACs: not checked (no installation key)',
  );
  const h = r.head;
  const at = h.file ? ` (${h.file})` : '';
  const headLine: Record<AuditReport['head']['status'], string> = {
    matched:
      `matches: ${plural(h.events ?? 0, 'event')} recorded at the last sync` +
      `${h.unsynced ? `, ${h.unsynced} appended after it (covered by their MACs only)` : ''}${at}`,
    missing: `none recorded${at}`,
    forged: `cannot be trusted${at}`,
    cut: `records ${plural(h.events ?? 0, 'event')}, the log has fewer${at}`,
    rewritten: `disagrees with the log${at}`,
    'not checked': 'not checked',
  };
  out.push(`head: ${headLine[h.status]}`);
  out.push(
    r.completion
      ? `completion: run.completed at seq ${r.completion.seq} (${r.completion.status})`
      : 'completion: no run.completed (the run is in progress, paused, or stopped without finishing)',
  );
  const a = r.artifacts;
  out.push(
    `artifacts: ${a.checked} re-hashed and matching (${a.full} against a full SHA-256, ` +
      `${a.checked - a.full} against the ref's prefix only)${a.bad.length ? `, ${a.bad.length} bad` : ''}`,
  );
  return out;
}
