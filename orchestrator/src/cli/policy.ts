import { resolveRunPolicy, type RunPolicy } from '../policy/index';
import { UsageError } from './usage';
import type { Mode } from '../policy/mode';
import { codingTools } from '../tools/builtin/index';
import { closeMatches } from '../problems/close-match';

export class PolicyCheckUsageError extends UsageError {}

export type PolicyCheckOptions = { policy?: string; mode?: Mode; repo: string };

/** What `policy check` prints for one call: the decision, the rule that made it and why. */
export type DecisionJson = Record<string, unknown> & { decision: string };

/** The policy and the tools, resolved once: a batch decides thousands of calls with them. */
export interface Checker {
  /** The decision for one call, or what is wrong with the call (nothing was decided then). */
  decide(toolName: string, input: unknown): { ok: true; json: DecisionJson } | { ok: false; error: string };
}

export async function policyChecker(o: PolicyCheckOptions): Promise<Checker> {
  const run: RunPolicy = await resolveRunPolicy({
    repoDir: o.repo,
    ...(o.policy ? { policyFile: o.policy } : {}),
    ...(o.mode ? { mode: o.mode } : {}),
  });
  const tools = codingTools();
  // The same for every call: the mode, the policy's source, what of it was ignored.
  const ignored = run.ignored.length ? { ignored: run.ignored } : {};
  const fixed = { mode: run.policy.mode, policy: run.loaded.source, ...ignored };
  return {
    decide(toolName, input) {
      const tool = tools.get(toolName);
      if (!tool) {
        const close = closeMatches(toolName, tools.names());
        const hint = close.length ? ` (did you mean ${close.slice(0, 2).join(' or ')}?)` : '';
        const error = `there is no tool named ${JSON.stringify(toolName)}${hint}; tools: ${tools.names().join(', ')}`;
        return { ok: false, error };
      }
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
        return { ok: false, error: `the input does not fit ${toolName}: ${issues}` };
      }
      const call = parsed.data;
      const readOnly = tool.isReadOnly(call);
      const d = run.policy.decide({ tool: toolName, input: call, readOnly, sideEffect: tool.sideEffect });
      const json = { decision: d.decision, rule: d.policyId, reason: d.reason, risk: d.risk, shape: d.shape, ...fixed };
      return { ok: true, json };
    },
  };
}

/**
 * `gatehouse policy check --tool T --input JSON`: the decision the gate would make for that call,
 * the rule that made it and why, as JSON. The input is validated like a model's call would be.
 */
export async function policyCheck(o: PolicyCheckOptions & { tool: string; input: string }): Promise<number> {
  let input: unknown;
  try {
    input = JSON.parse(o.input);
  } catch (e) {
    throw new PolicyCheckUsageError(`--input is not valid JSON: ${(e as Error).message}`);
  }
  const checker = await policyChecker(o);
  const r = checker.decide(o.tool, input);
  if (!r.ok) throw new PolicyCheckUsageError(r.error.replace(/^the input/, '--input'));
  process.stdout.write(`${JSON.stringify(r.json)}\n`);
  return 0;
}
