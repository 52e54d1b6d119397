import type { InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { ok, type Outcome, type PrimitiveContext } from './context';

/** Passes one line to a running MCP session's stdin (mcp-session.ts). */
export async function mcpSend(input: InvocationOf<'mcp_send'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const written = await ctx.sessions.write(input.session, input.line);
  if (!written)
    throw new PrimitiveError('not_found', `no MCP session ${input.session} is running (it ended or never started)`);
  return ok('', { kind: 'mcp_send', bytes: Buffer.byteLength(input.line) });
}
