import type { Decision, PolicyRequest, RunFacts } from './approval-policy';
import type { PolicyRule, RuleList } from './file';
import { mcpPathSubjects, parseMcpName } from './mcp-names';
import type { Mode } from './mode';
import { shapeOf } from './shape';
import type { CommandClass } from './shell/types';

/** The engine's rule lookup (engine.ts RuleIndex.find). */
export type FindRule = (tool: string, list: RuleList, subject: string | undefined) => PolicyRule | undefined;
/** The engine's default for an action no rule names, by its class (engine.ts modeDefault). */
export type ModeDefault = (
  mode: Mode,
  cls: CommandClass,
  shape: string,
  facts: RunFacts,
) => { decision: Decision['decision']; policyId: string; reason: string };

const GIT_DIR = /(^|\/)\.git(\/|$)/;

/**
 * An MCP tool's call (docs/mcp.md): rules for the tool (`mcp__fs__write_file`) and for its whole
 * server (`mcp__fs`) decide first, deny then ask then allow; a pattern is matched against every path
 * the call names (mcp-names.ts): a deny or ask rule catches the call if any path matches, an allow
 * rule covers it only if every path does (and there is one). No rule: the mode decides by the
 * call's class. A stdio server's tool counts as a write inside the sandbox, a URL server's as
 * network. The server's annotations are its own claims, so they can only move that class toward
 * asking: `destructiveHint` makes it destructive (asked every time in confirm-novel, never
 * remembered by shape), `openWorldHint` makes it network (asked in every mode but read-only).
 * `readOnlyHint` never makes a call a read: an MCP call is never allowed by the mode as one.
 */
export function decideMcp(
  find: FindRule,
  modeDefault: ModeDefault,
  mode: Mode,
  req: PolicyRequest,
  facts: RunFacts,
): Decision {
  const parsed = parseMcpName(req.tool);
  const names = parsed ? [req.tool, `mcp__${parsed.server}`] : [req.tool];
  const subjects = mcpPathSubjects(req.input);
  const hints = req.hints ?? {};
  const paths = subjects.length ? ` ${subjects.slice(0, 5).join(', ')}` : '';
  const risk = [
    `${req.sideEffect === 'network' ? 'network' : 'mcp'}: ${req.tool}${paths}`,
    ...(hints.destructive ? ['annotation: destructiveHint (the server says it may destroy data)'] : []),
    ...(hints.openWorld ? ['annotation: openWorldHint (the server says it reaches outside)'] : []),
  ];
  const shape = mcpShape(req.tool, subjects);
  const ruled = (list: RuleList, rule: PolicyRule, subject?: string): Decision => ({
    decision: list,
    policyId: rule.id,
    reason: rule.reason ?? `${req.tool}${subject !== undefined ? ` ${subject}` : ''} matches ${list} rule ${rule.text}`,
    risk,
    shape,
  });
  for (const list of ['deny', 'ask'] as const) {
    for (const name of names) {
      const whole = find(name, list, undefined);
      if (whole) return ruled(list, whole);
      for (const s of subjects) {
        const rule = find(name, list, s);
        if (rule) return ruled(list, rule, s);
      }
    }
    if (list === 'deny' && mode !== 'read-only') {
      const git = subjects.find((s) => GIT_DIR.test(s));
      if (git !== undefined)
        return {
          decision: 'ask',
          policyId: 'gatehouse:git-dir',
          reason: `${req.tool} ${git}: names a path under .git/, which names programs git runs; always asked`,
          risk,
          shape,
        };
    }
  }
  for (const name of names) {
    const whole = find(name, 'allow', undefined);
    if (whole) return ruled('allow', whole);
  }
  if (subjects.length > 0) {
    const covering = subjects.map((s) => names.map((n) => find(n, 'allow', s)).find(Boolean));
    if (covering.every(Boolean)) {
      const ids = [...new Set(covering.map((r) => (r as PolicyRule).id))];
      return {
        decision: 'allow',
        policyId: ids.join(', '),
        reason: `every path is allowed (${ids.join(', ')})`,
        risk,
        shape,
      };
    }
  }
  const cls: CommandClass =
    req.sideEffect === 'network' || hints.openWorld ? 'network' : hints.destructive ? 'destructive' : 'write';
  const d = modeDefault(mode, cls, shape, facts);
  return { ...d, risk, shape, reason: `MCP tool (${cls}): ${d.reason}` };
}

/**
 * What confirm-novel remembers of an approved MCP call: the tool and the directory of every path it
 * names (`mcp__fs__move_file:.github/workflows/,src/`), one path reading as a built-in path tool's
 * shape. A shape of the first path alone let an approved `move_file src/a -> src/b` stand for a later
 * `move_file src/c -> .github/workflows/x.yml`, never asked.
 */
function mcpShape(tool: string, subjects: readonly string[]): string {
  if (subjects.length === 0) return shapeOf(tool, {}, undefined);
  const dirs = new Set(subjects.map((s) => shapeOf(tool, { path: s }, undefined).slice(tool.length + 1)));
  return `${tool}:${[...dirs].sort().join(',')}`;
}
