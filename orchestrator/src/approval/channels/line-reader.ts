import { createInterface, type Interface } from 'node:readline';

/**
 * On a TTY, keys typed between questions wait in the kernel's buffer (node cannot flush it) and
 * arrive the moment the next question starts reading. Nobody reads a question and answers it
 * this fast, so lines arriving this soon after it is shown were typed before it and are ignored.
 */
const TTY_SETTLE_MS = 250;

export type Read = { kind: 'line'; line: string } | { kind: 'eof' } | { kind: 'aborted' };

/**
 * Lines from the input, handed out only while a question is on screen. Each question gets its
 * own readline interface, closed when it is answered: between questions stdin is paused (an idle
 * stdin does not keep the process alive) and out of raw mode (so Ctrl-C still reaches the
 * process as a signal). Whatever was typed ahead is dropped when the next question starts: a key
 * pressed before a question was shown must not answer it.
 */
export class LineReader {
  private rl: Interface | undefined;
  private queue: string[] = [];
  private waiter: ((r: Read) => void) | undefined;
  /** The input ended (Ctrl-D, closed stdin) or the channel was closed: every later read is EOF. */
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
  ) {}

  begin(): void {
    this.queue = [];
    if (this.closed) return;
    // An input that ended while no interface listened would never say so again.
    if ((this.input as NodeJS.ReadableStream & { readableEnded?: boolean }).readableEnded) {
      this.closed = true;
      return;
    }
    this.dropTypedAhead();
    const rl = createInterface({ input: this.input, output: this.output });
    const tty = isTty(this.input);
    const shownAt = Date.now();
    let ours = false;
    rl.on('line', (line) => {
      if (tty && Date.now() - shownAt < TTY_SETTLE_MS) {
        this.output.write('  (ignored a line typed before this question was shown)\n> ');
        return;
      }
      if (this.waiter) this.waiter({ kind: 'line', line });
      else this.queue.push(line);
    });
    rl.on('close', () => {
      if (ours) return;
      // readline closes itself on end of input. Ctrl-D on a terminal answers this question only;
      // the terminal is still there for the next one. A pipe or file that ended stays ended.
      if (tty && !(this.input as NodeJS.ReadableStream & { readableEnded?: boolean }).readableEnded) this.endQuestion();
      else this.markClosed();
    });
    // In raw (TTY) mode Ctrl-C reaches readline, not the process: pass it on so the CLI's handler runs.
    if (tty) rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    this.rl = rl;
    this.release = () => {
      ours = true;
      rl.close();
    };
  }

  end(): void {
    this.queue = [];
    this.rl = undefined;
    this.release();
    this.release = () => undefined;
  }

  next(signal: AbortSignal): Promise<Read> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve({ kind: 'line', line: queued });
    if (this.closed || !this.rl) return Promise.resolve({ kind: 'eof' });
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise((resolve) => {
      const onAbort = () => {
        this.waiter = undefined;
        resolve({ kind: 'aborted' });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = (r) => {
        signal.removeEventListener('abort', onAbort);
        this.waiter = undefined;
        resolve(r);
      };
    });
  }

  close(): void {
    this.end();
    this.markClosed();
  }

  private release: () => void = () => undefined;

  private markClosed(): void {
    this.closed = true;
    this.endQuestion();
  }

  private endQuestion(): void {
    this.rl = undefined; // next() now answers EOF for the rest of this question
    this.waiter?.({ kind: 'eof' });
  }

  /** Whatever is buffered before the question's interface exists was typed ahead: read and discard it. */
  private dropTypedAhead(): void {
    const r = this.input as NodeJS.ReadableStream & { readableLength?: number };
    while ((r.readableLength ?? 0) > 0 && r.read() !== null) {
      /* discarded */
    }
  }
}

function isTty(s: NodeJS.ReadableStream): boolean {
  return (s as NodeJS.ReadableStream & { isTTY?: boolean }).isTTY === true;
}
