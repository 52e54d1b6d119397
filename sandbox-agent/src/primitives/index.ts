import type { Invocation } from '@gatehouse/shared';
import { changes } from './changes';
import type { Outcome, PrimitiveContext } from './context';
import { editFile } from './edit-file';
import { exec } from './exec';
import { glob } from './glob';
import { grep } from './grep';
import { list } from './list';
import { mcpSend } from './mcp-send';
import { mcpSession } from './mcp-session';
import { readFile } from './read-file';
import { resolvePaths } from './resolve';
import { writeFile } from './write-file';

export type { Outcome, PrimitiveContext } from './context';

/** One entry per primitive; the daemon dispatches here after every check has passed. */
export function runPrimitive(inv: Invocation, ctx: PrimitiveContext): Promise<Outcome> {
  switch (inv.primitive) {
    case 'read_file':
      return readFile(inv.input, ctx);
    case 'write_file':
      return writeFile(inv.input, ctx);
    case 'edit_file':
      return editFile(inv.input, ctx);
    case 'list':
      return list(inv.input, ctx);
    case 'glob':
      return glob(inv.input, ctx);
    case 'grep':
      return grep(inv.input, ctx);
    case 'exec':
      return exec(inv.input, ctx);
    case 'changes':
      return changes(inv.input, ctx);
    case 'resolve':
      return resolvePaths(inv.input, ctx);
    case 'mcp_session':
      return mcpSession(inv.input, ctx);
    case 'mcp_send':
      return mcpSend(inv.input, ctx);
  }
}
