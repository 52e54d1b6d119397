import type { NatsConnection } from 'nats';
import { headlessChannel, type OnAsk } from '../approval/channels/headless';
import { natsChannel } from '../approval/channels/nats';
import { terminalChannel } from '../approval/channels/terminal';
import type { ApprovalChannel } from '../approval/channels/types';

export interface ChannelChoice {
  runId: string;
  /** --json: stdout is the event stream, so nobody is prompted there. */
  json: boolean;
  onAsk: OnAsk;
  /** Approvers from the policy file: when any are listed, requests also go out over NATS. */
  approvers: { name: string; publicKey: string }[];
  nc: NatsConnection;
  /** How long a request waits for a NATS answer before the terminal or --on-ask decides. */
  natsWaitMs: number;
  onRejected?: (reason: string, requestId: string | undefined) => void;
}

/**
 * Where a run's asks go. A person at a terminal is prompted; without one (CI, no TTY, --json)
 * the run never hangs: `--on-ask pause` stops it with exit code 3, `--on-ask deny` refuses.
 * Listed NATS approvers get the request first, for a bounded wait.
 */
export function chooseChannel(c: ChannelChoice): ApprovalChannel {
  const interactive = !c.json && process.stdin.isTTY === true && process.env.CI !== 'true';
  const local = interactive
    ? terminalChannel({ input: process.stdin, output: process.stderr })
    : headlessChannel(c.onAsk);
  if (c.approvers.length === 0) return local;
  return natsChannel({
    nc: c.nc,
    runId: c.runId,
    approvers: c.approvers,
    waitMs: c.natsWaitMs,
    fallback: local,
    ...(c.onRejected ? { onRejected: (reason, raw) => c.onRejected?.(reason, requestIdOf(raw)) } : {}),
  });
}

/** The request a refused answer named, if it is readable at all. */
function requestIdOf(raw: string): string | undefined {
  try {
    const id = (JSON.parse(raw) as { requestId?: unknown }).requestId;
    return typeof id === 'string' ? id.slice(0, 128) : undefined;
  } catch {
    return undefined;
  }
}
