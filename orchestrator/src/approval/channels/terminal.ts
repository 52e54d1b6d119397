import os from 'node:os';
import type { ApprovalAnswer, ApprovalChannel, ApprovalPrompt } from './types';
import { LineReader } from './line-reader';
import { planDialog } from './terminal-plan';
import { oneLine, visible } from './screen';

export interface TerminalChannelOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /**
   * Who answers, recorded as `user:<name>` (a value with a colon, `ci:bot`, is kept as is); defaults to $USER or the OS
   * account name.
   */
  approver?: string;
}

/** Invalid answers tolerated before the channel gives up and denies (a stuck key, a pasted file). */
const MAX_INVALID = 5;
/** A preview longer than this is cut on screen; the approval still covers the whole action. */
const MAX_PREVIEW_LINES = 400;
const MAX_REASON_CHARS = 500;

/**
 * Asks the person at the terminal. Prompts are serialized: parallel sub-agents asking at once see
 * one question at a time, each answered before the next is printed.
 */
export function terminalChannel(opts: TerminalChannelOptions): ApprovalChannel {
  return new TerminalChannel(opts);
}

const CANCELLED: ApprovalAnswer = { decision: 'pause', channel: 'terminal', reason: 'cancelled' };

class TerminalChannel implements ApprovalChannel {
  readonly name = 'terminal' as const;
  private readonly reader: LineReader;
  private readonly out: NodeJS.WritableStream;
  private readonly approver: string;
  /** Settles when the last queued prompt is done; each ask waits on the one before it. */
  private turn: Promise<void> = Promise.resolve();

  constructor(opts: TerminalChannelOptions) {
    this.reader = new LineReader(opts.input, opts.output);
    this.out = opts.output;
    this.approver = approverId(opts.approver);
  }

  async ask(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer> {
    const previous = this.turn;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    // The next ask waits for this one *and* the one before it, even if this one is cancelled while
    // still queued: otherwise a cancelled waiter would let two prompts share the screen.
    this.turn = Promise.all([previous, mine]).then(() => undefined);
    try {
      if (!(await untilOrAborted(previous, signal))) return { ...CANCELLED };
      return await this.converse(prompt, signal);
    } finally {
      done();
    }
  }

  async close(): Promise<void> {
    this.reader.close();
  }

  private async converse(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer> {
    const w = (s: string) => void this.out.write(s);
    this.reader.begin();
    try {
      // A plan and an escalation have answers of their own (terminal-plan.ts); the frame is the same.
      const dialog = planDialog(prompt);
      if (dialog) {
        w(render(prompt, dialog.menu));
        return await dialog.converse({
          write: w,
          read: () => this.reader.next(signal),
          approver: this.approver,
          maxInvalid: MAX_INVALID,
        });
      }
      w(render(prompt, MENU));
      for (let invalid = 0; ;) {
        w('> ');
        const read = await this.reader.next(signal);
        if (read.kind === 'aborted') {
          w('\n  cancelled: the run no longer waits for this answer\n');
          return { ...CANCELLED };
        }
        if (read.kind === 'eof') {
          w('\n  input closed: denied\n');
          return { decision: 'deny', approver: this.approver, channel: 'terminal', reason: 'no answer (input closed)' };
        }
        const choice = parseChoice(read.line);
        if (choice === 'once' || choice === 'run') {
          w(choice === 'once' ? '  approved once\n' : '  approved for this run\n');
          return { decision: 'grant', scope: choice, approver: this.approver, channel: 'terminal' };
        }
        if (choice === 'deny') {
          w('  reason (optional, Enter to skip): ');
          const why = await this.reader.next(signal);
          if (why.kind === 'aborted') {
            w('\n  cancelled: the run no longer waits for this answer\n');
            return { ...CANCELLED };
          }
          // They already chose to deny; a closed input only loses the reason, not the decision.
          const reason = why.kind === 'line' ? why.line.trim().slice(0, MAX_REASON_CHARS) : '';
          w(why.kind === 'eof' ? '\n  denied\n' : '  denied\n');
          return {
            decision: 'deny',
            approver: this.approver,
            channel: 'terminal',
            reason: reason || 'denied by the user',
          };
        }
        invalid++;
        if (invalid >= MAX_INVALID) {
          w(`  no valid answer after ${MAX_INVALID} tries: denied\n`);
          return {
            decision: 'deny',
            approver: this.approver,
            channel: 'terminal',
            reason: `no valid answer after ${MAX_INVALID} attempts (expected o, r or d)`,
          };
        }
        w(`  please answer o (approve once), r (approve for this run) or d (deny) [${invalid}/${MAX_INVALID}]\n`);
      }
    } finally {
      this.reader.end();
    }
  }
}

function parseChoice(line: string): 'once' | 'run' | 'deny' | undefined {
  switch (line.trim().toLowerCase()) {
    case 'o':
    case 'once':
      return 'once';
    case 'r':
    case 'run':
      return 'run';
    case 'd':
    case 'deny':
      return 'deny';
    default:
      // Deliberately no `y`/`yes`: it does not say which scope, so the person must pick one.
      return undefined;
  }
}

function approverId(name: string | undefined): string {
  const who = name ?? (process.env.USER || safeUsername() || 'unknown');
  return who.includes(':') ? who : `user:${who}`;
}

function safeUsername(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return undefined; // no passwd entry (some containers)
  }
}

/** The question, framed so that text from the model (preview, reason) cannot pass for the menu. */
const MENU = '[o] approve once  [r] approve for this run  [d] deny';

function render(p: ApprovalPrompt, menu: string): string {
  const rows: [string, string][] = [];
  if (p.lineage.length > 1) rows.push(['lineage', p.lineage.map(oneLine).join(' › ')]);
  rows.push(
    ['run', oneLine(p.runId)],
    ['tool', oneLine(p.tool)],
    ['rule', oneLine(p.rule)],
    ['reason', oneLine(p.reason)],
  );
  p.risk.forEach((r, i) => rows.push([i === 0 ? 'risk' : '', oneLine(r)]));
  rows.push(['request', oneLine(p.requestId)]);
  const lines = ['', '━━ approval needed ' + '━'.repeat(40), ...rows.map(([k, v]) => `  ${k.padEnd(8)} ${v}`)];
  const preview = visible(p.preview).split('\n');
  const shown = preview.slice(0, MAX_PREVIEW_LINES);
  lines.push('  ┌ preview', ...shown.map((l) => `  │ ${l}`));
  if (preview.length > shown.length) {
    lines.push(
      `  │ … ${preview.length - shown.length} more lines not shown; the approval covers all of them (deny ` +
        `if unsure)`,
    );
  }
  lines.push('  └', menu, '');
  return lines.join('\n');
}

/** Resolves true when `p` settles, false as soon as `signal` aborts. */
function untilOrAborted(p: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(!signal.aborted);
      },
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(!signal.aborted);
      },
    );
  });
}
