import { z } from 'zod';

/**
 * The approval stage until the policy engine lands: read-only actions are allowed; everything
 * else is decided by the mode. It is its own stage with its own event, policy id and reason, so
 * the full engine can replace it without touching the pipeline.
 */
export const Mode = z.enum(['read-only', 'confirm-each', 'confirm-novel', 'sandboxed-auto']);
export type Mode = z.infer<typeof Mode>;

/** What an action can touch; the approval stage decides on it. */
export type SideEffect = 'read' | 'write' | 'execute' | 'network' | 'delegate';

export interface ApprovalRequest {
  tool: string;
  input: unknown;
  readOnly: boolean;
  sideEffect: SideEffect;
}

export interface Decision {
  decision: 'allow' | 'ask' | 'deny';
  policyId: string;
  reason: string;
}

export interface ApprovalPolicy {
  decide(request: ApprovalRequest): Decision;
}

export function interimPolicy(mode: Mode): ApprovalPolicy {
  return {
    decide(req) {
      if (req.readOnly) return { decision: 'allow', policyId: 'interim/read-only-allowed', reason: 'read-only action' };
      if (req.sideEffect === 'network' || req.sideEffect === 'delegate') {
        return { decision: 'ask', policyId: `interim/${req.sideEffect}-asks`, reason: `${req.sideEffect} actions always need approval` };
      }
      switch (mode) {
        case 'read-only':
          return { decision: 'deny', policyId: 'interim/mode-read-only', reason: 'the run is in read-only mode' };
        case 'sandboxed-auto':
          return { decision: 'allow', policyId: 'interim/mode-sandboxed-auto', reason: `${req.sideEffect} inside the sandbox is allowed in sandboxed-auto mode` };
        case 'confirm-each':
        case 'confirm-novel':
          return { decision: 'ask', policyId: `interim/mode-${mode}`, reason: `${req.sideEffect} actions need approval in ${mode} mode` };
      }
    },
  };
}
