import type {
  Actor,
  EventDataOf,
  EventOf,
  EventType,
  InvocationResult,
  OutputChunk,
  PrimitiveInput,
  PrimitiveName,
  ApprovalRef,
} from '@gatehouse/shared';

/** The event log as the pipeline uses it (implemented by events/RunLog). */
export interface LogPort {
  append<T extends EventType>(
    type: T,
    actor: Actor,
    data: EventDataOf<T>,
    opts?: { causationId?: string | null },
  ): EventOf<T>;
  /** Makes everything appended so far durable. */
  sync(): void;
  /** sync(), then wait until the run's shared store (if any) holds it all; rejects if the run was taken over. */
  flush?(): Promise<void>;
  /** The log's own secret redaction, for text that is cut before it is appended. */
  redact(text: string): string;
  artifacts: {
    put(content: string | Buffer): { ref: string; bytes: number; sha256: string };
    read(
      ref: string,
      offset?: number,
      limit?: number,
    ): { text: string; offset: number; bytes: number; totalBytes: number; eof: boolean };
  };
}

/** The sandbox as the pipeline uses it (implemented by sandbox/Sandbox). */
export interface SandboxPort {
  readonly sandboxId: string;
  invoke<P extends PrimitiveName>(
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
  ): Promise<InvocationResult>;
}
