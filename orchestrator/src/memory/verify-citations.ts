import type { EventEnvelope, ValidationError } from '@gatehouse/shared';
import type { MemoryCitation } from './memory-record';

/** Shorter quotes than this prove nothing (`ok`, `npm`): a quote must say something. */
export const MIN_QUOTE_CHARS = 12;

/**
 * Tools whose observations cannot support a record: their text is the model's own (what it
 * proposed, echoed back) or gatehouse's, not something read from the workspace or a command.
 */
const NOT_EVIDENCE = new Set(['remember', 'submit_plan', 'complete_task', 'delegate']);

/**
 * Whether each citation is supported, mechanically: the observation is one of THIS run's log (an
 * id from another run, or one that does not exist, is refused), it succeeded, its content came from
 * the workspace or a command (framed as untrusted data, not a message of gatehouse's that may echo
 * the model's words), and the quote appears in it verbatim. The quote is looked for inside the
 * frame only, never in the provenance line gatehouse wrote around it. This proves the evidence is
 * on record, not that the text follows from it: that is the gate's question (docs/memory.md).
 */
export function citationProblems(
  citations: readonly MemoryCitation[],
  events: readonly EventEnvelope[],
  runId: string,
): ValidationError[] {
  const problems: ValidationError[] = [];
  citations.forEach((c, i) => {
    const at = `citations.${i}`;
    const quote = c.quote.trim();
    if (quote.length < MIN_QUOTE_CHARS) {
      problems.push({
        path: `${at}.quote`,
        code: 'quote_too_short',
        message: `a quote must be at least ${MIN_QUOTE_CHARS} characters copied from the observation`,
      });
      return;
    }
    const obs = events.find(
      (e) => e.runId === runId && e.type === 'tool.observation' && e.data.observationId === c.observationId,
    );
    if (!obs || obs.type !== 'tool.observation') {
      problems.push({
        path: `${at}.observationId`,
        code: 'no_such_observation',
        message: `${c.observationId} is not an observation of this run: cite one of this run's own observations`,
      });
      return;
    }
    const d = obs.data;
    if (d.outcome !== 'ok' || NOT_EVIDENCE.has(d.tool)) {
      problems.push({
        path: `${at}.observationId`,
        code: 'not_evidence',
        message:
          `${c.observationId} (${d.tool}, ${d.outcome}) cannot support a record: cite a successful read or ` +
          'command whose output holds the quote',
      });
      return;
    }
    const body = framedBody(d.content, c.observationId);
    if (body === undefined) {
      problems.push({
        path: `${at}.observationId`,
        code: 'not_evidence',
        message: `${c.observationId} holds no content from the workspace or a command`,
      });
      return;
    }
    if (!body.includes(quote)) {
      problems.push({
        path: `${at}.quote`,
        code: 'quote_not_found',
        message: `the quote does not appear verbatim in ${c.observationId}: copy it exactly from the observation`,
      });
      return;
    }
    if (modelWrote(quote, events, runId, obs.seq))
      problems.push({
        path: `${at}.quote`,
        code: 'not_evidence',
        message:
          `the quote appears in ${c.observationId} because the model wrote it itself earlier in this run (in a ` +
          "tool call's input): that is no evidence; cite text the workspace or a command produced",
      });
  });
  return problems;
}

/**
 * Whether the quote is the model's own words put back: it appears in the input of a call the model
 * made before the observation (a file it wrote, a command it echoed), so reading it back proves
 * nothing. Only a verbatim copy is caught: output the model derived (base64, printf pieces) is the
 * gate's judgement, which is why the gate asks (docs/memory.md).
 */
function modelWrote(quote: string, events: readonly EventEnvelope[], runId: string, before: number): boolean {
  return events.some(
    (e) =>
      e.runId === runId &&
      e.seq < before &&
      e.type === 'tool.intent' &&
      !NOT_EVIDENCE.has(e.data.tool) &&
      stringsOf(e.data.input).some((s) => s.includes(quote)),
  );
}

/** Every string inside a tool call's input, bounded in depth. */
function stringsOf(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth > 8 || value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap((v) => stringsOf(v, depth + 1));
}

/** The data inside an observation's untrusted-data frame (tools/observe/frame.ts), undefined when it has none. */
export function framedBody(content: string, observationId: string): string | undefined {
  const open = new RegExp(`^<untrusted-data id="${observationId}" nonce="([0-9a-f]+)">$`, 'm').exec(content);
  if (!open) return undefined;
  const start = open.index + open[0].length + 1;
  const end = content.lastIndexOf(`\n</untrusted-data nonce="${open[1]}">`);
  return end < start - 1 ? undefined : content.slice(start, Math.max(start, end));
}
