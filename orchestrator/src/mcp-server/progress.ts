import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Progress notifications for a tool call, when the caller asked for them (a progressToken): one
 * per event the run prints, its type and tool, so a long run shows it is alive (and a client with
 * `resetTimeoutOnProgress` does not time out). Nothing when no token was given.
 */
export function progressSender(extra: ToolExtra): (e: { type: string; data: Record<string, unknown> }) => void {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => undefined;
  let progress = 0;
  return (e) => {
    progress += 1;
    const tool = typeof e.data.tool === 'string' ? ` ${e.data.tool.slice(0, 100)}` : '';
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, message: `${e.type}${tool}` },
      })
      .catch(() => undefined);
  };
}
