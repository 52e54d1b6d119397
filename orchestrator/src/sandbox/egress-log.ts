import { z } from 'zod';
import { EGRESS_HOST_MAX, type EgressDecision, type EgressListening } from '@gatehouse/shared';

/** Lines longer than this are not decisions (the proxy cuts hosts to EGRESS_HOST_MAX). */
export const EGRESS_LINE_MAX = 4096;

const Phase = z.enum(['setup', 'agent']);
const Port = z.number().int().min(0).max(65535);
const Text = (max: number): z.ZodString => z.string().max(max);

const Decision: z.ZodType<EgressDecision> = z.strictObject({
  event: z.enum(['egress.allowed', 'egress.denied']),
  host: Text(EGRESS_HOST_MAX),
  port: Port,
  phase: Phase,
  address: Text(64).optional(),
  reason: Text(1024).optional(),
});

const Listening: z.ZodType<EgressListening> = z.strictObject({
  event: z.literal('egress.listening'),
  port: Port,
  phase: Phase,
});

export type EgressLine = { decision: EgressDecision } | { listening: EgressListening } | { error: string };

/**
 * One line of the egress proxy's stdout, read strictly: anything that is not exactly a decision
 * or the start line (other fields, wrong types, a phase other than the proxy's) is an error to
 * report, never a decision to record.
 */
export function parseEgressLine(line: string, phase: 'setup' | 'agent'): EgressLine {
  if (line.length > EGRESS_LINE_MAX) return { error: `a line of ${line.length} characters` };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: `not JSON: ${JSON.stringify(line.slice(0, 200))}` };
  }
  const listening = Listening.safeParse(value);
  const decision = Decision.safeParse(value);
  const parsed = listening.success ? listening.data : decision.success ? decision.data : undefined;
  if (!parsed) return { error: `not a decision: ${JSON.stringify(line.slice(0, 200))}` };
  if (parsed.phase !== phase) return { error: `a decision for phase ${parsed.phase} from the ${phase} proxy` };
  if (parsed.event === 'egress.listening') return { listening: parsed };
  if (parsed.event === 'egress.allowed' && (parsed.address === undefined || parsed.reason !== undefined)) {
    return { error: `an allowed decision without its address or with a reason: ${JSON.stringify(line.slice(0, 200))}` };
  }
  if (parsed.event === 'egress.denied' && parsed.reason === undefined) {
    return { error: `a denied decision without a reason: ${JSON.stringify(line.slice(0, 200))}` };
  }
  return { decision: parsed };
}

/** Splits a byte stream into lines, bounding each: an over-long line is reported once, cut, and skipped. */
export function lineSplitter(onLine: (line: string) => void, onTooLong: (bytes: number) => void): (c: Buffer) => void {
  let pending = '';
  let skipping = 0;
  return (chunk) => {
    const parts = (pending + chunk.toString('utf8')).split('\n');
    pending = parts.pop() ?? '';
    for (const p of parts) {
      if (skipping > 0) {
        onTooLong(skipping + p.length);
        skipping = 0;
      } else onLine(p);
    }
    if (pending.length > EGRESS_LINE_MAX) {
      skipping += pending.length;
      pending = '';
    }
  };
}
