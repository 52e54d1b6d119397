import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { SandboxError } from './errors';
import { identityJson, type RunIdentity } from './run-identity';

/** How long an attach may take to answer (it is one local round trip when it works). */
const ATTACH_MS = 15_000;

/**
 * The write end of a cold sandbox's stdin, attached while it starts: the daemon's binding, a line
 * at a time (sandbox-agent/src/config.ts fromStdin) — the run's identity, then, once the
 * repository is in, the protect list, after which stdin closes for good (StdinOnce). A write on
 * an open attach costs well under a millisecond where each archive call cost 43–70 ms here, and
 * only the Docker API reaches it: no file in the container ever holds the run's credentials.
 */
export class StdinBinding {
  private failure: Error | undefined;

  private constructor(
    private readonly stream: Duplex,
    private readonly sandboxId: string,
  ) {
    // After the container is gone the socket may fail; that is reported by the next write, never thrown.
    stream.on('error', (e: Error) => (this.failure ??= e));
    stream.on('close', () => (this.failure ??= new Error('the attach was closed')));
  }

  /** Attaches to the created container's stdin (before or while it starts: what is written waits in the pipe). */
  static async attach(container: Docker.Container, sandboxId: string): Promise<StdinBinding> {
    const attaching = container.attach({ stream: true, stdin: true, stdout: false, stderr: false, hijack: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SandboxError(`attaching to sandbox ${sandboxId}'s stdin got no answer in ${ATTACH_MS} ms`)),
        ATTACH_MS,
      );
    });
    try {
      const stream = (await Promise.race([attaching, late])) as unknown as Duplex;
      return new StdinBinding(stream, sandboxId);
    } catch (e) {
      // One that answers after all is closed at once.
      void attaching.then(
        (s) => (s as unknown as Duplex).destroy(),
        () => undefined,
      );
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Binds the sandbox to its run. */
  identity(id: RunIdentity): Promise<void> {
    return this.line(identityJson(id), 'its run identity');
  }

  /** Says the workspace is complete, with the paths to protect, and closes stdin. */
  async workspaceComplete(protect: object): Promise<void> {
    await this.line(JSON.stringify(protect), 'its protect list');
    await new Promise<void>((resolve) => this.stream.end(resolve));
  }

  /** Drops the attach (the sandbox is being removed, or its start failed). */
  close(): void {
    this.stream.destroy();
  }

  private line(text: string, what: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (e: Error): void =>
        reject(new SandboxError(`could not hand sandbox ${this.sandboxId} ${what} on its stdin: ${e.message}`));
      if (this.failure) return fail(this.failure);
      this.stream.write(`${text}\n`, (e) => (e ? fail(e) : resolve()));
    });
  }
}
