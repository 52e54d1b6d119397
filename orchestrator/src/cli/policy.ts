import { loadProjectConfig } from '../config/index';
import { resolveRunPolicy, type RunPolicy } from '../policy/index';
import { UsageError } from './usage';
import type { Mode } from '../policy/mode';
import { codingTools } from '../tools/builtin/index';
import { decideCall } from '../tools/path-decision';
import type { Tool } from '../tools/tool';
import { closeMatches } from '../problems/close-match';
import { checkedMcpTool, type McpToolFacts } from './policy-mcp-tool';
import { policyInputs } from './run-config';

export class PolicyCheckUsageError extends UsageError {}

export type PolicyCheckOptions = { policy?: string; config?: string; mode?: Mode; repo: string };

/** What `policy check` prints for one call: the decision, the rule that made it and why. */
export type DecisionJson = Record<string, unknown> & { decision: string };

/** What a call to an MCP tool may bring besides its input: the server's annotations and input schema. */
export type McpCallFacts = Pick<McpToolFacts, 'annotations' | 'inputSchema'>;

/** The policy and the tools, resolved once: a batch decides thousands of calls with them. */
export interface Checker {
  /** The decision for one call, or what is wrong with the call (nothing was decided then). */
  decide(
    toolName: string,
    input: unknown,
    mcp?: McpCallFacts,
  ): { ok: true; json: DecisionJson } | { ok: false; error: string };
}

/**
 * The run's policy as `gatehouse run` resolves it (the --config file's or the repository's config's
 * policy included), and the decision its gate makes (tools/path-decision.ts decideCall) for a
 * built-in tool or an MCP tool (`mcp__SERVER__TOOL`, built as the run builds it: policy-mcp-tool.ts).
 * Paths are decided as requested: there is no workspace to resolve links in.
 */
export async function policyChecker(o: PolicyCheckOptions): Promise<Checker> {
  const config = loadProjectConfig({ repoDir: o.repo, ...(o.config !== undefined ? { configFile: o.config } : {}) });
  const run: RunPolicy = await resolveRunPolicy({
    repoDir: o.repo,
    ...(o.policy ? { policyFile: o.policy } : {}),
    ...policyInputs(config.policy),
    ...(o.mode ? { mode: o.mode } : {}),
    ...(config.mcp ? { mcpServers: Object.keys(config.mcp) } : {}),
  });
  const tools = codingTools();
  // The same for every call: the mode, the policy's source, what of it was ignored.
  const ignored = run.ignored.length ? { ignored: run.ignored } : {};
  const fixed = { mode: run.policy.mode, policy: run.loaded.source, ...ignored };
  const noShapes: ReadonlySet<string> = new Set();
  const toolFor = (toolName: string, mcp: McpCallFacts): { tool?: Tool<unknown>; extra?: object; error?: string } => {
    try {
      const checked = checkedMcpTool(toolName, { ...(config.mcp ? { servers: config.mcp } : {}), ...mcp });
      if (checked) return { tool: checked.tool, extra: { mcp: checked.facts } };
    } catch (e) {
      return { error: (e as Error).message };
    }
    if (mcp.annotations !== undefined || mcp.inputSchema !== undefined)
      return { error: `annotations and an input schema are for MCP tools (mcp__SERVER__TOOL), not ${toolName}` };
    const tool = tools.get(toolName);
    if (tool) return { tool };
    const close = closeMatches(toolName, tools.names());
    const hint = close.length ? ` (did you mean ${close.slice(0, 2).join(' or ')}?)` : '';
    const names = `${tools.names().join(', ')}, or an MCP tool mcp__SERVER__TOOL`;
    return { error: `there is no tool named ${JSON.stringify(toolName)}${hint}; tools: ${names}` };
  };
  return {
    decide(toolName, input, mcp = {}) {
      const { tool, extra, error } = toolFor(toolName, mcp);
      if (!tool) return { ok: false, error: error ?? `no tool ${toolName}` };
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
        return { ok: false, error: `the input does not fit ${toolName}: ${issues}` };
      }
      const { decision: d } = decideCall(run.policy, noShapes, tool, parsed.data, []);
      const json = { decision: d.decision, rule: d.policyId, reason: d.reason, risk: d.risk, shape: d.shape };
      return { ok: true, json: { ...json, ...fixed, ...extra } };
    },
  };
}

/**
 * `gatehouse policy check --tool T --input JSON`: the decision the gate would make for that call,
 * the rule that made it and why, as JSON. The input is validated like a model's call would be.
 */
export async function policyCheck(
  o: PolicyCheckOptions & { tool: string; input: string; annotations?: string; inputSchema?: string },
): Promise<number> {
  const input = jsonFlag('--input', o.input);
  const mcp: McpCallFacts = {
    ...(o.annotations !== undefined ? { annotations: jsonFlag('--annotations', o.annotations) } : {}),
    ...(o.inputSchema !== undefined ? { inputSchema: jsonFlag('--input-schema', o.inputSchema) } : {}),
  };
  const checker = await policyChecker(o);
  const r = checker.decide(o.tool, input, mcp);
  if (!r.ok) throw new PolicyCheckUsageError(r.error.replace(/^the input/, '--input'));
  process.stdout.write(`${JSON.stringify(r.json)}\n`);
  return 0;
}

function jsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PolicyCheckUsageError(`${flag} is not valid JSON: ${(e as Error).message}`);
  }
}
