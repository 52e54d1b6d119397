import type { EventEnvelope } from '@gatehouse/shared';
import type { Sandbox } from '../sandbox/index';
import { saveWorkspace, type SavedWorkspace, type WorkspaceManifest } from '../sandbox/workspace-save';
import { crashPoint } from '../tools/crash-points';
import type { LogPort } from '../tools/ports';
import type { ToolRegistry } from '../tools/registry';

export interface CheckpointDeps {
  sandbox: Sandbox;
  runDir: string;
  log: LogPort & { events(): readonly EventEnvelope[] };
  registry: ToolRegistry;
  maxFileBytes?: number;
  /** The shared store the log writes through to: held from a changing call's start to its checkpoint. */
  replica?: { hold?(): void; release?(): void };
}

/**
 * After every call that can change the workspace (a write, an edit, a command that is not
 * read-only, a sub-agent's files applied through those), the workspace is saved beside the log
 * and a `workspace.checkpoint` event names it. Saves are incremental: a file whose Docker stat did
 * not change since the last checkpoint is not read again, and content is stored once per hash.
 * Checkpoints run one at a time, in order; the next invocation waits for the one in progress.
 *
 * With a shared store, what follows the start of a call that can change the workspace is held from
 * the store until its checkpoint is recorded (the checkpoint's flush hands it on): a worker that dies
 * in between leaves the call started there, not completed, and a takeover on any engine continues
 * from the checkpoint before it and reports the call interrupted, instead of finding a completed
 * change nothing saved (which it must refuse).
 */
export class Checkpointer {
  private last: { manifest: WorkspaceManifest; scratch: string } | undefined;
  private count = 0;
  private chain: Promise<void> = Promise.resolve();
  private pending = false;
  /** The last call started can change the workspace, and its write-ahead flush has not happened yet. */
  private changeStarting = false;
  private readonly calls = new Map<string, { tool?: string; input?: unknown }>();
  /** The last checkpoint that failed, if the newest one failed (resume then needs the sandbox itself). */
  failure: string | undefined;

  constructor(private readonly deps: CheckpointDeps) {
    // A resumed run continues the numbering of its log.
    for (const e of deps.log.events()) {
      if (e.type === 'workspace.checkpoint') this.count = Math.max(this.count, e.data.checkpoint);
      else this.note(e);
    }
  }

  /** The newest saved state, for the export at the end (files unchanged since are not read again). */
  get previous(): { manifest: WorkspaceManifest; scratch: string } | undefined {
    return this.last;
  }

  /** Sees every event the run writes; a completed call that can change the workspace schedules a checkpoint. */
  observe(e: EventEnvelope): void {
    if (e.type === 'tool.execution.started') {
      this.changeStarting = this.canChange(e.data.callId);
    } else if (e.type === 'tool.execution.completed') {
      if (!this.canChange(e.data.callId)) return;
      // Refused by the sandbox: nothing changed, nothing to save.
      if (e.data.status === 'rejected') this.deps.replica?.release?.();
      else this.schedule();
    } else this.note(e);
  }

  private note(e: EventEnvelope): void {
    if (e.type === 'tool.intent') this.calls.set(e.data.callId, { tool: e.data.tool });
    else if (e.type === 'tool.validation' && e.data.ok)
      this.calls.set(e.data.callId, { ...this.calls.get(e.data.callId), input: e.data.input });
  }

  private canChange(callId: string): boolean {
    const c = this.calls.get(callId);
    const tool = c?.tool ? this.deps.registry.get(c.tool) : undefined;
    // A call this run did not see validated (continued after a resume) counts as a change.
    if (!tool || c?.input === undefined) return true;
    return tool.sideEffect !== 'delegate' && !tool.isReadOnly(c.input);
  }

  /**
   * Called after the flush that puts a call's start on record before it runs: a call that can change
   * the workspace then holds the store until its checkpoint's flush.
   */
  afterWriteAhead(): void {
    if (this.changeStarting) this.deps.replica?.hold?.();
    this.changeStarting = false;
  }

  /** Queues a checkpoint; several queued while one runs become one. */
  schedule(): void {
    if (this.pending) return;
    this.pending = true;
    this.chain = this.chain.then(async () => {
      this.pending = false;
      await this.take().catch((e: Error) => {
        this.failure = e.message;
        // Nothing was saved: the store gets the call's completion anyway (a resume then refuses, as it must).
        this.deps.replica?.release?.();
      });
    });
  }

  /** Resolves when no checkpoint is queued or running. */
  async idle(): Promise<void> {
    while (this.pending) await this.chain;
    await this.chain;
  }

  /** Saves now and records it; returns what was saved. */
  async take(): Promise<SavedWorkspace> {
    const { log } = this.deps;
    const afterSeq = log.events().at(-1)?.seq ?? 0;
    const n = this.count + 1;
    const saved = await saveWorkspace(this.deps.sandbox.container, this.deps.runDir, `checkpoint-${n}`, {
      ...(this.last ? { previous: this.last.manifest, scratch: this.last.scratch } : {}),
      ...(this.deps.maxFileBytes !== undefined ? { maxFileBytes: this.deps.maxFileBytes } : {}),
    });
    // Saved, not yet on record: the window a worker may die in (tests: the store must not hold the change yet).
    crashPoint('before-checkpoint-recorded');
    this.count = n;
    this.last = { manifest: saved.manifest, scratch: saved.scratch };
    this.failure = undefined;
    log.append('workspace.checkpoint', 'runtime', {
      checkpoint: n,
      manifest: saved.file,
      manifestSha256: saved.sha256,
      afterSeq,
      files: saved.manifest.files.length,
      deleted: saved.manifest.deleted.length,
      skipped: saved.manifest.skipped.map((s) => ({ path: s.path, size: s.size })),
    });
    // The saved workspace (its files go to the shared store too) is what a takeover resumes from.
    await (log.flush ? log.flush() : log.sync());
    return saved;
  }
}

/** The sandbox as the pipeline sees it: an invocation waits until the checkpoint in progress is saved. */
export function gateInvocations(sandbox: Sandbox, checkpointer: Checkpointer): Sandbox {
  return new Proxy(sandbox, {
    get(target, prop, receiver) {
      if (prop === 'invoke') {
        return async (...args: Parameters<Sandbox['invoke']>) => {
          await checkpointer.idle();
          return target.invoke(...args);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}
