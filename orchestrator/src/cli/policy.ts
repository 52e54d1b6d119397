import { resolveRunPolicy } from '../policy/index';
import { UsageError } from './usage';
import type { Mode } from '../policy/mode';
import { codingTools } from '../tools/builtin/index';

export class PolicyCheckUsageError extends UsageError {}

/**
 * `gatehouse policy check --tool T --input JSON`: the decision the gate would make for that call,
 * the rule that made it and why, as JSON. The input is validated like a model's call would be.
 */
export async function policyCheck(o: { tool: string; input: string; policy?: string; mode?: Mode; repo: string }): Promise<number> {
  let input: unknown;
  try {
    input = JSON.parse(o.input);
  } catch (e) {
    throw new PolicyCheckUsageError(`--input is not valid JSON: ${(e as Error).message}`);
  }
  const tool = codingTools().get(o.tool);
  if (!tool) throw new PolicyCheckUsageError(`there is no tool named ${JSON.stringify(o.tool)}; tools: ${codingTools().names().join(', ')}`);
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) throw new PolicyCheckUsageError(`--input does not fit ${o.tool}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ')}`);
  const run = await resolveRunPolicy({ repoDir: o.repo, ...(o.policy ? { policyFile: o.policy } : {}), ...(o.mode ? { mode: o.mode } : {}) });
  const d = run.policy.decide({ tool: o.tool, input: parsed.data, readOnly: tool.isReadOnly(parsed.data), sideEffect: tool.sideEffect });
  process.stdout.write(`${JSON.stringify({ decision: d.decision, rule: d.policyId, reason: d.reason, risk: d.risk, shape: d.shape, mode: run.policy.mode, policy: run.loaded.source, ...(run.ignored.length ? { ignored: run.ignored } : {}) })}\n`);
  return 0;
}
