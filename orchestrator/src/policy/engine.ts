import type { LoadedPolicy, PolicyRule, RuleList } from './file';
import type { Mode } from './mode';
import type { ApprovalPolicy, Decision, PolicyRequest, RunFacts } from './approval-policy';
import { decideMcp } from './mcp-decision';
import { isMcpName } from './mcp-names';
import { pathDenial } from './path-denial';
import { memoryToolDefault } from './memory-tools';
import { planToolDefault } from './plan-tools';
import { pathSubject, subjectKind } from './rules';
import { shapeOf } from './shape';
import type { CommandClass, ShellAnalysis, ShellClassifier, SimpleCommand } from './shell/types';

const NO_FACTS: RunFacts = { approvedShapes: new Set() };

/**
 * The one gate: every validated call is decided here, by the same steps, whatever the tool.
 * Strictest match wins — deny, then ask, then allow, then the mode's default — so the order of
 * rules in the file never changes a decision (only which matching rule is quoted).
 * For `bash`, rules apply to every simple command the classifier found, never to the raw string.
 */
export function createPolicy(policy: LoadedPolicy, mode: Mode, classifier: ShellClassifier): ApprovalPolicy {
  const index = new RuleIndex(policy.rules);
  const classify = memo(classifier);
  return {
    mode,
    paths: pathDenial(policy.rules),
    decide(req: PolicyRequest, facts: RunFacts = NO_FACTS): Decision {
      if (req.tool === 'bash') return decideCommand(index, mode, classify(commandOf(req.input)), facts);
      if (isMcpName(req.tool)) return decideMcp((t, l, s) => index.find(t, l, s), modeDefault, mode, req, facts);
      return decideCall(index, mode, req, facts);
    },
  };
}

function decideCall(index: RuleIndex, mode: Mode, req: PolicyRequest, facts: RunFacts): Decision {
  const subject = subjectKind(req.tool) === 'path' ? pathSubject(req.input) : undefined;
  const risk = req.readOnly ? [] : [`${req.sideEffect}${subject !== undefined ? `: ${subject}` : ''}`];
  const shape = shapeOf(req.tool, req.input, undefined);
  for (const list of ['deny', 'ask', 'allow'] as const) {
    const rule = index.find(req.tool, list, subject);
    if (rule)
      return {
        decision: list,
        policyId: rule.id,
        reason:
          rule.reason ?? `${req.tool}${subject !== undefined ? ` ${subject}` : ''} matches ${list} rule ${rule.text}`,
        risk,
        shape,
      };
    if (list === 'deny' && mode !== 'read-only' && !req.readOnly && subject !== undefined && inGitDir(subject)) {
      return {
        decision: 'ask',
        policyId: GIT_DIR_POLICY,
        reason: `${req.tool} ${subject}: ${GIT_DIR_REASON}`,
        risk,
        shape,
      };
    }
  }
  const planned = planToolDefault(req.tool, mode) ?? memoryToolDefault(req.tool, mode);
  if (planned) return { ...planned, risk, shape };
  // A sub-agent is sandboxed and held to a narrowed copy of this policy, so delegating is treated
  // like a write: allowed in sandboxed-auto, asked once per shape in confirm-novel.
  const cls: CommandClass = req.readOnly
    ? 'read-only'
    : req.sideEffect === 'write' || req.sideEffect === 'delegate'
      ? 'write'
      : req.sideEffect === 'execute'
        ? 'test-build'
        : 'network';
  const d = modeDefault(mode, cls, shape, facts);
  return {
    ...d,
    risk,
    shape,
    reason: d.decision === 'allow' ? `${req.sideEffect} action: ${d.reason}` : `${req.sideEffect} action: ${d.reason}`,
  };
}

function decideCommand(index: RuleIndex, mode: Mode, a: ShellAnalysis, facts: RunFacts): Decision {
  const shape = shapeOf('bash', undefined, a);
  const risk = riskOf(a);
  const base = { risk, shape };
  for (const part of a.commands) {
    const rule = index.find('bash', 'deny', part.text);
    if (rule)
      return {
        ...base,
        decision: 'deny',
        policyId: rule.id,
        reason: rule.reason ?? `\`${short(part.text)}\` matches deny rule ${rule.text}${via(part)}`,
      };
  }
  // A redirection writes a file as surely as write_file does: the file rules apply to it too.
  for (const target of a.writes) {
    const key = pathSubject({ path: target });
    for (const tool of ['write_file', 'edit_file']) {
      const rule = index.find(tool, 'deny', key);
      if (rule)
        return {
          ...base,
          decision: 'deny',
          policyId: rule.id,
          reason: rule.reason ?? `\`> ${short(target)}\` writes ${key}, which deny rule ${rule.text} covers`,
        };
    }
  }
  const toolDeny = index.find('bash', 'deny', undefined);
  if (toolDeny)
    return {
      ...base,
      decision: 'deny',
      policyId: toolDeny.id,
      reason: toolDeny.reason ?? `bash is denied by ${toolDeny.text}`,
    };
  if (mode === 'read-only')
    return {
      ...base,
      decision: 'deny',
      policyId: 'mode:read-only',
      reason: 'the run is in read-only mode: commands do not run',
    };
  const gitDir = gitDirWrite(a);
  if (gitDir)
    return { ...base, decision: 'ask', policyId: GIT_DIR_POLICY, reason: `\`${short(gitDir)}\`: ${GIT_DIR_REASON}` };
  if (!a.followable) {
    return {
      ...base,
      decision: 'ask',
      policyId: 'classifier:unfollowable',
      reason:
        `the command cannot be fully analysed (${a.problems.slice(0, 3).join('; ') || 'unknown construct'}); ` +
        `it needs a person's approval`,
    };
  }
  for (const part of a.commands) {
    const rule = index.find('bash', 'ask', part.text);
    if (rule)
      return {
        ...base,
        decision: 'ask',
        policyId: rule.id,
        reason: rule.reason ?? `\`${short(part.text)}\` matches ask rule ${rule.text}${via(part)}`,
      };
  }
  for (const target of a.writes) {
    const key = pathSubject({ path: target });
    const rule = index.find('write_file', 'ask', key) ?? index.find('edit_file', 'ask', key);
    if (rule)
      return {
        ...base,
        decision: 'ask',
        policyId: rule.id,
        reason: rule.reason ?? `\`> ${short(target)}\` writes ${key}, which ask rule ${rule.text} covers`,
      };
  }
  const toolAsk = index.find('bash', 'ask', undefined);
  if (toolAsk)
    return { ...base, decision: 'ask', policyId: toolAsk.id, reason: toolAsk.reason ?? `bash asks by ${toolAsk.text}` };
  const toolAllow = index.find('bash', 'allow', undefined);

  // Every part must be allowed: by an allow rule, or by the mode's default for its class.
  const allowedBy: string[] = [];
  const needs: string[] = [];
  const parts: Array<{ text: string; cls: CommandClass }> = a.commands.map((c) => ({ text: c.text, cls: c.class }));
  for (const w of a.writes) parts.push({ text: `> ${w}`, cls: 'write' });
  for (const part of parts) {
    const rule = part.text.startsWith('> ') ? toolAllow : (index.find('bash', 'allow', part.text) ?? toolAllow);
    if (rule) {
      allowedBy.push(rule.id);
      continue;
    }
    const d = modeDefault(mode, part.cls, shape, facts);
    if (d.decision === 'allow') allowedBy.push(d.policyId);
    else needs.push(`${part.cls}: \`${short(part.text)}\``);
  }
  if (needs.length === 0) {
    const ids = [...new Set(allowedBy)];
    return {
      ...base,
      decision: 'allow',
      policyId: ids.join(', ') || `mode:${mode}`,
      reason: ids.length ? `every command is allowed (${ids.join(', ')})` : 'nothing to run',
    };
  }
  return {
    ...base,
    decision: 'ask',
    policyId: `mode:${mode}`,
    reason:
      `${mode} mode asks for ` +
      `${needs.slice(0, 4).join(', ')}${needs.length > 4 ? ` and ${needs.length - 4} more` : ''}`,
  };
}

/** What a mode does with an action no rule names, by its class. */
function modeDefault(
  mode: Mode,
  cls: CommandClass,
  shape: string,
  facts: RunFacts,
): { decision: Decision['decision']; policyId: string; reason: string } {
  if (cls === 'read-only')
    return { decision: 'allow', policyId: `mode:${mode}`, reason: 'read-only actions are allowed in every mode' };
  switch (mode) {
    case 'read-only':
      return { decision: 'deny', policyId: 'mode:read-only', reason: 'the run is in read-only mode' };
    case 'confirm-each':
      return {
        decision: 'ask',
        policyId: 'mode:confirm-each',
        reason: 'confirm-each mode asks for every write and command',
      };
    case 'confirm-novel':
      // A shape is coarse (flags and targets are not part of it): what destroys is asked each time.
      if (RISKY.has(cls) || cls === 'destructive')
        return { decision: 'ask', policyId: 'mode:confirm-novel', reason: `${cls} actions always ask` };
      if (facts.approvedShapes.has(shape))
        return {
          decision: 'allow',
          policyId: 'mode:confirm-novel(known shape)',
          reason: `an action of this shape (${shape}) was approved earlier in this run`,
        };
      return {
        decision: 'ask',
        policyId: 'mode:confirm-novel',
        reason: `first action of this shape (${shape}) in this run`,
      };
    case 'sandboxed-auto':
      if (RISKY.has(cls))
        return {
          decision: 'ask',
          policyId: 'mode:sandboxed-auto',
          reason: `${cls} actions ask even in sandboxed-auto`,
        };
      return {
        decision: 'allow',
        policyId: 'mode:sandboxed-auto',
        reason: 'inside the sandbox, allowed in sandboxed-auto mode',
      };
  }
}

/**
 * A `.git` directory (the repository's, or a nested one) holds what git runs: config, hooks,
 * attributes. A write there always asks, whatever the mode; only a deny rule decides first.
 */
const GIT_DIR_POLICY = 'gatehouse:git-dir';
const GIT_DIR_REASON = 'writes under .git/, which names programs git runs (config, hooks); always asked';

function inGitDir(key: string): boolean {
  return /(^|[/=])\.git(\/|$)/.test(key);
}

/**
 * What in a command line may write under `.git`: a redirection or output operand there, or, when
 * the line changes anything at all, any word naming such a path (`cp x .git/config`, `cd .git && …`).
 */
function gitDirWrite(a: ShellAnalysis): string | undefined {
  const target = a.writes.find((w) => inGitDir(pathSubject({ path: w })));
  if (target !== undefined) return `> ${target}`;
  if (a.class === 'read-only') return undefined;
  for (const c of a.commands) {
    if (c.argv.some((w) => inGitDir(pathSubject({ path: w })))) return c.text;
  }
  return undefined;
}

/** Classes that leave the sandbox's guarantees (or cannot be judged): never allowed by a mode alone. */
const RISKY = new Set<CommandClass>(['network', 'privilege', 'unknown']);

function riskOf(a: ShellAnalysis): string[] {
  const lines = a.commands.filter((c) => c.class !== 'read-only').map((c) => `${c.class}: ${short(c.text)}${via(c)}`);
  for (const w of a.writes) lines.push(`write: > ${w}`);
  for (const p of a.problems) lines.push(`unfollowable: ${p}`);
  return [...new Set(lines)].slice(0, 20);
}

function via(c: SimpleCommand): string {
  return c.via.length ? ` (inside ${c.via.join(' → ')})` : '';
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function commandOf(input: unknown): string {
  const c = typeof input === 'object' && input !== null ? (input as { command?: unknown }).command : undefined;
  return typeof c === 'string' ? c : '';
}

/** Rules by tool and list; bash rules further by the command's first word, so 1,000 rules cost a few tests. */
class RuleIndex {
  private readonly byTool = new Map<string, Record<RuleList, Bucket>>();

  constructor(rules: readonly PolicyRule[]) {
    for (const r of rules) {
      let lists = this.byTool.get(r.tool);
      if (!lists) this.byTool.set(r.tool, (lists = { deny: new Bucket(), ask: new Bucket(), allow: new Bucket() }));
      lists[r.list].add(r);
    }
  }

  /** The first rule of `list` for `tool` that matches `subject`; with no subject, only whole-tool rules. */
  find(tool: string, list: RuleList, subject: string | undefined): PolicyRule | undefined {
    const bucket = this.byTool.get(tool)?.[list];
    if (!bucket) return undefined;
    return bucket.match(subject);
  }
}

class Bucket {
  private readonly whole: PolicyRule[] = [];
  private readonly byHead = new Map<string, PolicyRule[]>();
  private readonly other: PolicyRule[] = [];

  add(r: PolicyRule): void {
    if (!r.test) this.whole.push(r);
    else if (r.head !== undefined) {
      const list = this.byHead.get(r.head) ?? [];
      list.push(r);
      this.byHead.set(r.head, list);
    } else this.other.push(r);
  }

  match(subject: string | undefined): PolicyRule | undefined {
    if (subject === undefined) return this.whole[0];
    const whole = this.whole[0];
    if (whole) return whole;
    const head = subject.split(' ', 1)[0] ?? '';
    for (const r of this.byHead.get(head) ?? []) if (r.test?.(subject)) return r;
    for (const r of this.other) if (r.test?.(subject)) return r;
    return undefined;
  }
}

/** Classification is pure; the same command line asked again (resume, retries) is not parsed twice. */
function memo(classifier: ShellClassifier): (command: string) => ShellAnalysis {
  const cache = new Map<string, ShellAnalysis>();
  return (command) => {
    const hit = cache.get(command);
    if (hit) return hit;
    const a = classifier.classify(command);
    if (cache.size >= 2000) cache.delete(cache.keys().next().value as string);
    cache.set(command, a);
    return a;
  };
}
