import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  actionHash,
  type ApprovalRef,
  type ChangedFile,
  type InvocationResult,
  type OutputChunk,
  type PrimitiveInput,
  type PrimitiveName,
} from '@gatehouse/shared';
import { runtimeApproval } from '../approval/runtime-approval';
import type { SandboxPort } from '../tools/ports';
import { runMemoryPrimitive, type ExecResponder } from './memory-primitives';
import { MemoryWorkspace, PrimitiveFailure, type MemoryWorkspaceInit } from './memory-workspace';

export type { ExecReply, ExecRequest, ExecResponder } from './memory-primitives';

/** One invocation the sandbox received, as sent. */
export interface SandboxCall {
  primitive: PrimitiveName;
  input: unknown;
  approval: ApprovalRef;
  invocationId?: string;
}

export interface MemorySandboxOptions extends MemoryWorkspaceInit {
  /** Answers `exec` (bash, git_status, git_diff); by default every command fails with exit code 127. */
  exec?: ExecResponder;
  sandboxId?: string;
  runId?: string;
}

const NO_SHELL: ExecResponder = ({ command }) => ({
  exitCode: 127,
  output: `${command.split(/\s/)[0] ?? command}: no responder for this command in the in-memory sandbox\n`,
});

/**
 * A `SandboxPort` without Docker: the daemon's primitives against an in-memory workspace, with its
 * checks that matter to the orchestrator — an approval's hash must match the exact action, paths
 * stay inside the workspace, preconditions (expected hashes, unique edits) hold — and its result
 * shapes. Commands are not run: a scripted responder answers them. For tests of pipeline logic;
 * what needs a real container (isolation, processes, git) stays in the e2e suite.
 */
export class MemorySandbox implements SandboxPort {
  readonly sandboxId: string;
  readonly runId: string;
  readonly workspace: MemoryWorkspace;
  /** Every invocation received, in order (the runtime's own path checks and peeks included). */
  readonly calls: SandboxCall[] = [];
  readonly #baseline: ReadonlyMap<string, string>;
  readonly #exec: ExecResponder;
  readonly #lose = new Map<PrimitiveName, string>();
  #invocations = 0;

  constructor(opts: MemorySandboxOptions = {}) {
    this.workspace = new MemoryWorkspace(opts);
    this.#baseline = this.workspace.snapshot();
    this.#exec = opts.exec ?? NO_SHELL;
    this.sandboxId = opts.sandboxId ?? 'sbx-memory';
    this.runId = opts.runId ?? 'run-memory';
  }

  /** The invocations a tool call made: those authorised by a policy decision or a person, not the runtime. */
  executed(): SandboxCall[] {
    return this.calls.filter((c) => c.approval.by !== 'runtime');
  }

  /** The next invocation of `primitive` gets no answer (the sandbox was lost): `invoke` rejects with `message`. */
  loseNext(primitive: PrimitiveName, message = 'the sandbox stopped answering'): void {
    this.#lose.set(primitive, message);
  }

  /** The workspace's changes since start-up, as `Sandbox.changes` gives them (hand-overs, results). */
  async changes(): Promise<{ diff: string; files: ChangedFile[]; truncated: boolean }> {
    const approval = runtimeApproval('changes', {}, 'export-changes');
    const result = await this.invoke('changes', {}, { approval });
    if (result.status !== 'ok' || result.data?.kind !== 'changes')
      throw new Error(`exporting changes failed: ${result.error?.message ?? result.status}`);
    return { diff: result.output, files: result.data.files, truncated: result.truncated };
  }

  /** Copies workspace files into a host folder, as `Sandbox.exportFiles` does through Docker. */
  exportFiles(paths: string[], destDir: string): Promise<void> {
    for (const p of paths) {
      const target = path.join(destDir, p);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, this.workspace.read(this.workspace.resolve(p)));
    }
    return Promise.resolve();
  }

  /** Puts files from a host folder into the workspace, as `Sandbox.importFiles` does through Docker. */
  importFiles(srcDir: string, paths: string[]): Promise<void> {
    for (const p of paths)
      this.workspace.write(this.workspace.resolve(p).rel, readFileSync(path.join(srcDir, p), 'utf8'));
    return Promise.resolve();
  }

  removeFiles(paths: string[]): Promise<void> {
    for (const p of paths) this.workspace.remove(this.workspace.resolve(p).rel);
    return Promise.resolve();
  }

  async invoke<P extends PrimitiveName>(
    primitive: P,
    input: PrimitiveInput<P>,
    opts: {
      approval: ApprovalRef;
      invocationId?: string;
      intentId?: string;
      timeoutMs?: number;
      outputCap?: number;
      onOutput?: (chunk: OutputChunk) => void;
      signal?: AbortSignal;
    },
  ): Promise<InvocationResult> {
    this.calls.push({
      primitive,
      input,
      approval: opts.approval,
      ...(opts.invocationId ? { invocationId: opts.invocationId } : {}),
    });
    const lost = this.#lose.get(primitive);
    if (lost !== undefined) {
      this.#lose.delete(primitive);
      throw new Error(lost);
    }
    const ids = {
      v: 1 as const,
      invocationId: opts.invocationId ?? `inv-memory-${++this.#invocations}`,
      runId: this.runId,
      sandboxId: this.sandboxId,
      primitive,
      durationMs: 0,
      replayed: false,
    };
    const refused = (code: 'approval_mismatch' | 'cancelled', message: string, path?: string): InvocationResult => ({
      ...ids,
      status: code === 'cancelled' ? 'aborted' : 'rejected',
      exitCode: null,
      signal: null,
      output: '',
      bytes: 0,
      truncated: false,
      filesChanged: [],
      error: { code, message, ...(path ? { path } : {}) },
    });
    // The daemon's own check: an approval stands for exactly one action.
    if (actionHash({ name: primitive, input }) !== opts.approval.actionHash)
      return refused('approval_mismatch', 'the approval was given for a different action', 'approval.actionHash');
    if (opts.signal?.aborted) return refused('cancelled', 'cancelled before it started; nothing ran');
    try {
      const outcome = await runMemoryPrimitive(primitive, input, {
        ws: this.workspace,
        baseline: this.#baseline,
        exec: this.#exec,
        outputCap: opts.outputCap ?? 1024 * 1024,
        timeoutMs: opts.timeoutMs ?? 30_000,
        invocationId: ids.invocationId,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
      });
      return { ...ids, exitCode: null, signal: null, filesChanged: [], ...outcome };
    } catch (thrown) {
      // As the daemon does: anything but a primitive's own refusal is an internal failure, not a lost sandbox.
      const e =
        thrown instanceof PrimitiveFailure
          ? thrown
          : new PrimitiveFailure('internal', `unexpected error: ${String(thrown)}`, 'failed');
      return {
        ...ids,
        status: e.status,
        exitCode: null,
        signal: null,
        output: '',
        bytes: 0,
        truncated: false,
        filesChanged: [],
        error: { code: e.code, message: e.message, ...(e.path === undefined ? {} : { path: e.path }) },
      };
    }
  }
}
