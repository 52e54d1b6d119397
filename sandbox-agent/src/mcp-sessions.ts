import type { Writable } from 'node:stream';

/**
 * The MCP stdio servers running in this sandbox, by the invocation id of their `mcp_session`: where
 * `mcp_send` finds the stdin to write a line to. A session is here from its start until its process
 * is gone; nothing else can reach a server's stdin.
 */
export class McpSessions {
  private readonly stdin = new Map<string, Writable>();

  open(invocationId: string, stdin: Writable): void {
    this.stdin.set(invocationId, stdin);
  }

  close(invocationId: string): void {
    this.stdin.delete(invocationId);
  }

  /** Writes one line; false when the session is not (or no longer) running. */
  write(invocationId: string, line: string): Promise<boolean> {
    const stdin = this.stdin.get(invocationId);
    if (!stdin || stdin.destroyed || !stdin.writable) return Promise.resolve(false);
    return new Promise((resolve) => stdin.write(`${line}\n`, (e) => resolve(!e)));
  }

  get size(): number {
    return this.stdin.size;
  }
}
