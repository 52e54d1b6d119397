import { policyCheck, PolicyCheckUsageError, type PolicyCheckOptions } from './policy';
import { policyCheckBatch } from './policy-batch';

/** `policy check`: one call (--tool and --input) or a batch (--batch), never both. */
type Options = PolicyCheckOptions & {
  tool?: string;
  input?: string;
  annotations?: string;
  inputSchema?: string;
  batch?: string;
};

export async function policyCheckCommand(o: Options): Promise<number> {
  if (o.batch !== undefined) {
    if (o.tool !== undefined || o.input !== undefined || o.annotations !== undefined || o.inputSchema !== undefined) {
      throw new PolicyCheckUsageError(
        '--batch reads the calls from its file: leave out --tool and --input (and --annotations and ' +
          '--input-schema: a line may carry "annotations" and "inputSchema")',
      );
    }
    return policyCheckBatch({ ...o, batch: o.batch });
  }
  if (o.tool === undefined || o.input === undefined) {
    const missing = o.tool === undefined ? '--tool' : '--input';
    const how = 'give --tool and --input for one call, or --batch FILE (- for stdin) for many';
    throw new PolicyCheckUsageError(`${how}; ${missing} is missing`);
  }
  return policyCheck({ ...o, tool: o.tool, input: o.input });
}
