import { workspaceKey } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import { closeMatches } from '../problems/close-match';
import { parseMcpName } from './mcp-names';
import { isToolName, RULE_TOOL_NAMES, subjectOf, type SubjectKind } from './tool-names';

/**
 * One policy rule, as written in a policy file: `read_file`, `bash(npm test*)`, `edit_file(src/**)`.
 * A rule names a tool and optionally a pattern over the action's subject: for `bash` the text of
 * each simple command the classifier found, for path tools the normalised workspace path.
 */
export interface Rule {
  /** As written, for messages and the audit trail. */
  text: string;
  tool: string;
  pattern: string | undefined;
  /** Compiled pattern; undefined means the rule covers every call of the tool. */
  test: ((subject: string) => boolean) | undefined;
  /** The literal first word of a bash pattern (`npm` in `npm test*`), used to index rules. */
  head: string | undefined;
}

export type { SubjectKind } from './tool-names';

/** What a rule's pattern is matched against, per tool (tool-names.ts). Other names take no pattern. */
export function subjectKind(tool: string): SubjectKind {
  return subjectOf(tool);
}

/** The path a path tool's call touches, normalised so that no spelling can dodge a rule. */
export function pathSubject(input: unknown): string {
  const p = typeof input === 'object' && input !== null ? (input as { path?: unknown }).path : undefined;
  return workspaceKey(typeof p === 'string' && p !== '' ? p : '.');
}

const RULE_SYNTAX = /^([a-z][a-z0-9_]*)(?:\((.*)\))?$/s;

/** A rule a person wrote is not one (loadPolicyFile reports it as a PolicyFileError naming the entry). */
export class RuleSyntaxError extends GatehouseError {
  readonly kind = 'usage';
}

export interface ParseRuleOptions {
  /**
   * The MCP servers the run's config declares: a rule naming another server is refused (its tools
   * are listed only once the run starts, so a rule's tool part cannot be checked at load).
   */
  mcpServers?: readonly string[];
  /**
   * A rule naming a tool that does not exist is refused (it would never match), unless the policy
   * is one a run recorded: that is compiled as it was then, a name the registry has since dropped
   * matching nothing, so the run can still be resumed.
   */
  unknownTools?: 'refuse' | 'keep';
}

export function parseRule(text: string, opts: ParseRuleOptions = {}): Rule {
  const m = RULE_SYNTAX.exec(text.trim());
  if (!m)
    throw new RuleSyntaxError(
      `"${text}" is not a rule: write TOOL or TOOL(PATTERN), e.g. bash(npm test*) or edit_file(src/**)`,
    );
  const tool = m[1] as string;
  const pattern = m[2];
  const mcp = parseMcpName(tool);
  if (!isToolName(tool) && !mcp && opts.unknownTools !== 'keep') throw new RuleSyntaxError(noSuchTool(text, tool));
  if (mcp && opts.mcpServers && !opts.mcpServers.includes(mcp.server) && opts.unknownTools !== 'keep')
    throw new RuleSyntaxError(noSuchServer(text, mcp.server, opts.mcpServers));
  if (pattern === undefined) return { text, tool, pattern: undefined, test: undefined, head: undefined };
  if (pattern.trim() === '')
    throw new RuleSyntaxError(`"${text}": the pattern is empty; write ${tool} alone to cover every call`);
  const kind = subjectKind(tool);
  if (kind === 'none')
    throw new RuleSyntaxError(
      `"${text}": ${tool} takes no pattern (patterns apply to bash commands and to path tools)`,
    );
  if (kind === 'command') {
    const normalised = pattern.trim().replace(/\s+/g, ' ');
    const re = commandPattern(normalised);
    const first = /^[^\s*?]+(?=\s|$)/.exec(normalised)?.[0];
    return { text, tool, pattern: normalised, test: (s) => re.test(s), head: first };
  }
  const normalised = normalisePathPattern(pattern.trim());
  const re = pathPattern(normalised);
  return { text, tool, pattern: normalised, test: (s) => re.test(s), head: undefined };
}

/** "no such tool `edti_file`; did you mean edit_file?", or the list of tools when none is close. */
function noSuchTool(text: string, tool: string): string {
  const close = closeMatches(tool, RULE_TOOL_NAMES);
  const hint = close.length
    ? `did you mean ${close.slice(0, 2).join(' or ')}?`
    : tool.startsWith('mcp_')
      ? 'an MCP rule is mcp__SERVER or mcp__SERVER__TOOL (docs/mcp.md)'
      : `the tools: ${RULE_TOOL_NAMES.join(', ')}`;
  return `"${text}": no such tool \`${tool}\`; ${hint}`;
}

/** "no MCP server `fss` in the config; did you mean fs?" */
function noSuchServer(text: string, server: string, servers: readonly string[]): string {
  const close = closeMatches(server, servers);
  const hint = close.length
    ? `did you mean ${close.slice(0, 2).join(' or ')}?`
    : servers.length
      ? `the config declares: ${servers.join(', ')}`
      : 'the config declares none ("mcp" in the project config, docs/mcp.md)';
  return `"${text}": no MCP server \`${server}\` in the config; ${hint}`;
}

/** Command patterns: `*` is any run of characters (spaces included), `?` one character; the rest is literal. */
function commandPattern(p: string): RegExp {
  let src = '';
  for (const ch of p) src += ch === '*' ? '.*' : ch === '?' ? '.' : escape(ch);
  return new RegExp(`^${src}$`, 's');
}

/**
 * Path globs over workspace keys: `**` any number of path segments, `*` within one segment, `?`
 * one character. A pattern ending in `/` or naming a directory also covers what is inside it only
 * when written with `/**`.
 */
export function pathPattern(p: string): RegExp {
  let src = '';
  for (let i = 0; i < p.length; i++) {
    const ch = p[i] as string;
    if (ch === '*' && p[i + 1] === '*') {
      const slash = p[i + 2] === '/';
      src += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (ch === '*') src += '[^/]*';
    else if (ch === '?') src += '[^/]';
    else src += escape(ch);
  }
  return new RegExp(`^${src}$`, 's');
}

/** Rules are written the way people spell paths: `./src/**`, `/workspace/src/**` and `src/**` are one rule. */
export function normalisePathPattern(p: string): string {
  if (p === '**' || p === '*') return p;
  const key = workspaceKey(p.replace(/\*\*/g, '\u0000').replace(/\*/g, '\u0001'));
  return key.replace(/\u0000/g, '**').replace(/\u0001/g, '*');
}

function escape(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}
