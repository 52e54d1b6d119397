import { normalizeAnswer } from './answer-text';
import { checkCommandFit } from './check-commands';
import { findAssertions, type Assertion } from './claim-words';
import { splitClaims, type Claim } from './claims';
import type { Evidence, ObservationFacts } from './evidence';

/** One claim as judged (the shape `run.feedback` records). */
export interface JudgedClaim {
  claim: string;
  cites: string[];
  supported: boolean;
  reason?: string;
}

export interface Judgement {
  supported: boolean;
  claims: JudgedClaim[];
  /** Why the answer is refused, for the model (present when not supported). */
  reason?: string;
}

/** The answer is hostile input: longer ones are refused, not read. */
export const CLAIM_LIMITS = { maxAnswerChars: 16_000, maxClaims: 100, maxClaimChars: 2000 } as const;

const CITE = /\bobs-(\d{1,9})\b/gi;
/** Between two citations of one group: "(obs-2, obs-3)", "obs-2 and obs-3". */
const CITE_GAP = /^[\s,;&()[\]/]*(?:and|&)?[\s,;&()[\]/]*$/i;
/** Where the object of a change claim ends. */
const OBJECT_STOP = /;|\s[-–]\s|—|\b(?:but|while|although|though|whereas|except|not|never|no|without|\w+n't)\b/gi;
const EXTENSION =
  /\.(?:[cm]?[jt]sx?|json5?|md|mdx|py|pyi|go|mod|sum|rs|java|kt|kts|scala|c|h|cc|cpp|cxx|hpp|hh|cs|fs|rb|php|sh|bash|zsh|ps1|ya?ml|toml|ini|cfg|conf|txt|csv|tsv|lock|html?|css|scss|sass|less|vue|svelte|sql|xml|proto|graphql|gql|gradle|properties|swift|mm|dart|ex|exs|erl|hs|ml|lua|pl|pm|tf|dockerfile|gitignore|editorconfig|snap|diff|patch)$/i;
const BARE_FILES =
  /^(?:Makefile|GNUmakefile|Dockerfile|Containerfile|Gemfile|Rakefile|Procfile|Jenkinsfile|LICENSE|Vagrantfile|\.env(?:\.[\w-]+)?)$/;
/** Names of libraries that look like files. */
const NOT_FILES =
  /^(?:node|vue|next|nuxt|react|express|angular|ember|backbone|three|d3|chart|moment|socket|deno)\.js$/i;

/**
 * Judges each claim of a final answer against the observations it cites (docs/claims.md). A claim
 * of success must cite an observation that succeeded and fits it: a test or build claim a test,
 * build or check command that exited 0; a change claim a call that changed the file it names; "it
 * works" a command that exited 0. A success claim citing a failed, denied or rejected observation,
 * or citing none, is unsupported, as is any citation of an observation the run does not have.
 * Negated claims ("did not pass") and statements of fact are never refused for what they say.
 */
export function judgeClaims(answer: string, evidence: Evidence): Judgement {
  if (answer.length > CLAIM_LIMITS.maxAnswerChars)
    return refuse(
      `the answer is ${answer.length} characters; answers over ${CLAIM_LIMITS.maxAnswerChars} are not checked ` +
        'claim by claim. Answer again, shorter: what was done, each claim citing its observation.',
    );
  const claims = splitClaims(normalizeAnswer(answer), CLAIM_LIMITS.maxClaims + 1);
  if (claims.length > CLAIM_LIMITS.maxClaims)
    return refuse(
      `the answer has more than ${CLAIM_LIMITS.maxClaims} sentences and list items; it is not checked claim by ` +
        'claim. Answer again, shorter: what was done, each claim citing its observation.',
    );
  const judged = claims.map((c) => judgeClaim(c, evidence));
  const refused = judged.filter((c) => !c.supported);
  if (refused.length === 0) return { supported: true, claims: judged };
  const lines = refused.map((c) => `- "${clip(c.claim, 200)}": ${c.reason ?? ''}`);
  return {
    supported: false,
    claims: judged,
    reason:
      `${refused.length} of its claims ${refused.length === 1 ? 'is' : 'are'} not supported by the observations ` +
      `cited:\n${lines.join('\n')}\nEach claim of success must cite (obs-N) an observation that shows it.`,
  };
}

function refuse(reason: string): Judgement {
  return { supported: false, claims: [], reason };
}

function judgeClaim(claim: Claim, evidence: Evidence): JudgedClaim {
  const groups = citeGroups(claim.text);
  const cites = [...new Set(groups.flatMap((g) => g.ids))];
  const problems: string[] = [];
  const missing = cites.filter((id) => !evidence.observations.has(id));
  if (missing.length > 0) problems.push(`it cites ${missing.join(', ')}, which this run does not have`);
  const assertions = findAssertions(claim.prose);
  for (const a of assertions) {
    if (a.negated) continue;
    const group = attributed(groups, a);
    const facts = group.flatMap((id) => evidence.observations.get(id) ?? []);
    const bad = facts.filter((o) => o.outcome !== 'ok');
    if (bad.length > 0) problems.push(`"${a.word}" cites ${bad.map(describeFailure).join(', ')}`);
    if (a.hedged) continue;
    if (group.length === 0) {
      problems.push(`it claims "${a.word}" but cites no observation; cite the obs-N that shows it`);
      continue;
    }
    const ok = facts.filter((o) => o.outcome === 'ok');
    // With nothing that succeeded, the failure (or the missing observation) is the reason; a change
    // claim also says whether the file it names changed at all.
    if (ok.length === 0 && a.kind !== 'change') continue;
    const problem = fitProblem(a, ok, claim.text, groups, assertions, evidence);
    if (problem) problems.push(problem);
  }
  return {
    claim: clip(claim.text, CLAIM_LIMITS.maxClaimChars),
    cites,
    supported: problems.length === 0,
    ...(problems.length ? { reason: clip([...new Set(problems)].join('; '), 2000) } : {}),
  };
}

/** Why the observations cited for a success word do not show it, or undefined when one does. */
function fitProblem(
  a: Assertion,
  facts: ObservationFacts[],
  text: string,
  groups: CiteGroup[],
  assertions: Assertion[],
  evidence: Evidence,
): string | undefined {
  const ids = facts.map((o) => o.id).join(', ');
  switch (a.kind) {
    case 'verified':
      return undefined;
    case 'works': {
      if (facts.some((o) => o.tool === 'bash' && exitedZero(o))) return undefined;
      return `"${a.word}" needs a command that ran and exited 0, and ${ids} ${isAre(facts)} ${toolsOf(facts)}`;
    }
    case 'check': {
      const commands = facts.filter((o) => o.tool === 'bash' && exitedZero(o));
      const why: string[] = [];
      for (const o of commands) {
        const fit = checkCommandFit(o.command ?? '', evidence.checkCommand);
        if (fit.fits) return undefined;
        why.push(`${o.id} ran ${JSON.stringify(clip(o.command ?? '', 120))}: ${fit.why}`);
      }
      if (why.length) return `"${a.word}" needs a test, build or check command that exited 0; ${why.join('; ')}`;
      const shown = `${ids} ${isAre(facts)} ${toolsOf(facts)}`;
      return `"${a.word}" needs a test, build or check command that exited 0, and ${shown}`;
    }
    case 'change': {
      const named = namedPaths(objectOf(text, a, groups, assertions));
      if (named.length === 0) {
        if (facts.length === 0 || facts.some((o) => o.changed.length > 0)) return undefined;
        return `"${a.word}" needs a call that changed a file, and ${ids} changed none`;
      }
      const problems: string[] = [];
      for (const n of named) {
        if (![...evidence.changed].some((f) => sameFile(f, n))) {
          problems.push(`${n} did not change in this run`);
          continue;
        }
        if (facts.some((o) => o.changed.some((f) => sameFile(f, n)))) continue;
        const by = [...evidence.observations.values()].filter((o) => o.changed.some((f) => sameFile(f, n)));
        const did = by.length ? ` (${by.map((o) => o.id).join(', ')} did)` : '';
        problems.push(`${ids || 'no observation it cites'} did not change ${n}${did}`);
      }
      return problems.length ? problems.join('; ') : undefined;
    }
  }
}

interface CiteGroup {
  start: number;
  end: number;
  ids: string[];
}

/** The claim's citations, adjacent ones ("obs-2, obs-3") grouped. */
function citeGroups(text: string): CiteGroup[] {
  const groups: CiteGroup[] = [];
  for (const m of text.matchAll(CITE)) {
    const id = `obs-${Number(m[1])}`;
    const last = groups.at(-1);
    if (last && CITE_GAP.test(text.slice(last.end, m.index))) {
      last.end = m.index + m[0].length;
      if (!last.ids.includes(id)) last.ids.push(id);
    } else groups.push({ start: m.index, end: m.index + m[0].length, ids: [id] });
  }
  return groups;
}

/** The citations a success word leans on: the next group after it, else the last one before it. */
function attributed(groups: CiteGroup[], a: Assertion): string[] {
  const after = groups.find((g) => g.start >= a.end);
  if (after) return after.ids;
  return groups.filter((g) => g.end <= a.index).at(-1)?.ids ?? [];
}

/**
 * What a change word is about: the words after it up to its citation, the next claim word or the
 * end of its clause ("created a.js and updated b.js"); when they name no file, the words before it
 * back to the start of its clause ("src/a.js is fixed").
 */
function objectOf(text: string, a: Assertion, groups: CiteGroup[], assertions: Assertion[]): string {
  const stopAfter = Math.min(
    groups.find((g) => g.start >= a.end)?.start ?? text.length,
    assertions.find((x) => x.index >= a.end)?.index ?? text.length,
    firstMatch(OBJECT_STOP, text, a.end) ?? text.length,
  );
  const forward = text.slice(a.end, stopAfter);
  if (namedPaths(forward).length > 0) return forward;
  const stopBefore = Math.max(
    groups.filter((g) => g.end <= a.index).at(-1)?.end ?? 0,
    assertions.filter((x) => x.end <= a.index).at(-1)?.end ?? 0,
    lastMatchEnd(OBJECT_STOP, text.slice(0, a.index)) ?? 0,
  );
  return text.slice(stopBefore, a.index);
}

/** File names in a piece of a claim: a path with a known extension, or a well-known file (Makefile). */
export function namedPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[\w@+.\/-]+/g)) {
    // `res.json()`, `console.log(`: a call, not a file.
    if (text[m.index + m[0].length] === '(') continue;
    const token = m[0].replace(/^(?:\.\/)+/, '').replace(/[.\-/]+$/, '');
    const base = token.split('/').at(-1) ?? '';
    if (!token || NOT_FILES.test(token)) continue;
    if (EXTENSION.test(base) || BARE_FILES.test(base)) out.push(token);
  }
  return [...new Set(out)];
}

/** A file named in an answer is a changed file when it is its path or the end of its path. */
function sameFile(changed: string, named: string): boolean {
  return changed === named || changed.endsWith(`/${named}`);
}

function exitedZero(o: ObservationFacts): boolean {
  // A bash observation is ok exactly when the command exited 0; a log without the exit code says so by its outcome.
  return o.outcome === 'ok' && (o.exitCode === undefined || o.exitCode === 0);
}

function describeFailure(o: ObservationFacts): string {
  switch (o.outcome) {
    case 'denied':
      return `${o.id}, which shows a refusal (${o.tool} was denied)`;
    case 'rejected':
      return `${o.id}, which shows a failure (${o.tool} was rejected and never ran)`;
    case 'pending':
      return `${o.id}, which has no result`;
    default:
      if (o.tool === 'bash') {
        const how = typeof o.exitCode === 'number' ? `exit code ${o.exitCode}` : 'the command did not finish';
        return `${o.id}, which shows a failure (${how})`;
      }
      return `${o.id}, which shows a failure (${o.tool} failed)`;
  }
}

function toolsOf(facts: ObservationFacts[]): string {
  return facts.map((o) => (o.tool === 'bash' ? `a command that exited ${o.exitCode ?? '?'}` : o.tool)).join(', ');
}

function isAre(facts: unknown[]): string {
  return facts.length === 1 ? 'is' : 'are';
}

function firstMatch(re: RegExp, text: string, from: number): number | undefined {
  const m = new RegExp(re.source, 'i').exec(text.slice(from));
  return m ? from + m.index : undefined;
}

function lastMatchEnd(re: RegExp, text: string): number | undefined {
  let end: number | undefined;
  for (const m of text.matchAll(new RegExp(re.source, 'gi'))) end = m.index + m[0].length;
  return end;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
