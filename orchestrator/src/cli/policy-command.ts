import { policyCheck, PolicyCheckUsageError, type PolicyCheckOptions } from './policy';
import { policyCheckBatch } from './policy-batch';

/** `policy check`: one call (--tool and --input) or a batch (--batch), never both. */
export async function policyCheckCommand(o: PolicyCheckOptions & { tool?: string; input?: string; batch?: string }): Promise<number> {
  if (o.batch !== undefined) {
    if (o.tool !== undefined || o.input !== undefined) throw new PolicyCheckUsageError('--batch reads the calls from its file: leave out --tool and --input');
    return policyCheckBatch({ ...o, batch: o.batch });
  }
  if (o.tool === undefined || o.input === undefined) {
    throw new PolicyCheckUsageError(`give --tool and --input for one call, or --batch FILE (- for stdin) for many; missing ${o.tool === undefined ? '--tool' : '--input'}`);
  }
  return policyCheck({ ...o, tool: o.tool, input: o.input });
}
