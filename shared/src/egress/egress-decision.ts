/**
 * One line of the egress proxy's stdout: a decision about one request. The orchestrator parses
 * these strictly (orchestrator/src/sandbox/egress-log.ts) and records each as an event.
 */
export type EgressPhase = 'setup' | 'agent';

export interface EgressDecision {
  event: 'egress.allowed' | 'egress.denied';
  /** The host as the client asked for it (lower-cased, without a trailing dot). */
  host: string;
  port: number;
  phase: EgressPhase;
  /** The address connected to (allowed), or the one that was refused (denied after a lookup). */
  address?: string;
  /** Why it was denied. */
  reason?: string;
}

/** The proxy's first line on stdout: it listens, on this port, for this phase. */
export interface EgressListening {
  event: 'egress.listening';
  port: number;
  phase: EgressPhase;
}

/** Host names in decisions are cut to this length: a client chooses them. */
export const EGRESS_HOST_MAX = 300;
