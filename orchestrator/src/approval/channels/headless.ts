import type { ApprovalAnswer, ApprovalChannel } from './types';

export type OnAsk = 'pause' | 'deny';

/**
 * No one is attached (CI, a detached run): answer at once, so a headless run never hangs. `pause`
 * lets the run stop with a distinct exit code and resume after `gatehouse approve`; `deny` turns
 * the ask into an observation the model can work around.
 */
export function headlessChannel(onAsk: OnAsk): ApprovalChannel {
  const answer: ApprovalAnswer =
    onAsk === 'deny'
      ? {
          decision: 'deny',
          approver: 'policy:on-ask-deny',
          channel: 'headless',
          reason: 'approval needed but this run denies asks (--on-ask deny)',
        }
      : {
          decision: 'pause',
          channel: 'headless',
          reason: 'no approver is attached (headless run); approve with `gatehouse approve`',
        };
  return {
    name: 'headless',
    // A fresh copy each time: callers may annotate the answer they get.
    ask: async () => ({ ...answer }),
  };
}
