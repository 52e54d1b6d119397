/**
 * What a claim says succeeded, found by its words (docs/claims.md lists them):
 * - `check`: tests, a build or a check passed ("tests pass", "the build succeeds", "compiles",
 *   "no longer fails", "0 failures");
 * - `works`: something was run and works ("it works");
 * - `change`: a file was changed ("fixed", "created", "added", "updated", "changed", …);
 * - `verified`: something was confirmed ("verified", "confirmed", "succeeded" outside tests and builds).
 */
export type AssertionKind = 'check' | 'works' | 'change' | 'verified';

export interface Assertion {
  kind: AssertionKind;
  /** The words as written. */
  word: string;
  /** Where in the claim's prose they start and end. */
  index: number;
  end: number;
  /** "did not pass", "nothing changed": says the opposite of success. */
  negated: boolean;
  /** "should pass", "if it works", "I think it is fixed": not asserted as a fact. */
  hedged: boolean;
}

interface Pattern {
  kind: AssertionKind | 'success';
  re: RegExp;
  /** The words carry their own negation ("no longer fails"): the negation check does not apply. */
  negationInside?: boolean;
  /** Follow-on words that make it something else ("passes the value to", "worked around"). */
  notBefore?: RegExp;
}

const PATTERNS: Pattern[] = [
  {
    kind: 'check',
    // Digits and signs for letters read as the letters (`p4ss`, `pa$$`), as a person reads them.
    re: /\bp[a4@][s5$][s5$](?:es|ed|ing)?(?![\w$])/gi,
    notBefore: /^\s+(?:to|through|the|a|an|its|their|his|her|along|over|down|on|it|them|by|as|in\s+the\s+value)\b/i,
  },
  { kind: 'check', re: /\bno\s+longer\s+(?:fail(?:s|ed|ing)?|break(?:s|ing)?|broken)\b/gi, negationInside: true },
  {
    kind: 'check',
    re: /\b(?:0|zero|no)\s+(?:tests?\s+)?(?:fail(?:ures?|ed|ing|s)?|errors?)\b/gi,
    negationInside: true,
  },
  { kind: 'check', re: /\b(?:all|is|are|now|stays?|turned|went)\s+green\b/gi },
  { kind: 'check', re: /\b(?:builds|built|compiles|compiled)\b(?!-)/gi },
  // "Tests: green", "build OK", "the suite is fine": a verdict on tests or a build without a verb of success.
  {
    kind: 'check',
    re: new RegExp(
      '\\b(?:tests?|specs?|suites?|builds?|ci|checks?|lint)\\b\\s{0,3}' +
        '(?:[:=-]\\s{0,3}|(?:are|is|all|now|look|looks|were|was)\\s+){1,3}(?:ok|okay|green|good|fine|clean)\\b',
      'gi',
    ),
  },
  { kind: 'check', re: /\b(?:tests?|builds?|ci|checks?|lint)\s{1,3}(?:ok|okay|green)\b/gi },
  // Check marks and "all good" say success as plainly as the words do.
  { kind: 'success', re: /[\u2705\u2713\u2714\u2611\u{1F7E2}\u{1F44D}]|\ball\s+good\b|\blgtm\b/giu },
  { kind: 'success', re: /\b(?:succeed(?:s|ed)?|successful(?:ly)?)\b/gi },
  {
    kind: 'works',
    re: /\b(?:works|worked|working)\b(?!-)/gi,
    notBefore: /^\s+(?:around|on\s+(?:it|this|that|the\s+fix)|directory|dir|tree|copy|set|hours|day)\b/i,
  },
  {
    kind: 'change',
    re: new RegExp(
      '\\b(?:fixed|resolved|created|added|updated|changed|modified|edited|implemented|removed|deleted|renamed|' +
        'replaced|rewrote|rewritten|refactored)\\b(?!-)',
      'gi',
    ),
  },
  { kind: 'verified', re: /\b(?:verified|confirmed|validated)\b/gi },
];

/** A claim that names tests, builds or checks makes "succeeded" a check claim. */
const CHECK_CONTEXT = /\b(?:tests?|specs?|suites?|builds?|compil\w*|lint\w*|type-?check\w*|checks?|ci)\b/i;
const DETERMINER = /^(?:the|a|an|this|that|these|those|my|your|our|their|its|his|her|newly|already-)$/i;
const NEGATION = /^(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without|unable|hardly|\w+n't)$/i;
const HEDGE =
  /^(?:should|would|could|may|might|will|shall|\w+'ll|probably|likely|hopefully|presumably|perhaps|maybe|possibly|expect|expected|expecting|think|believe|assume|suppose|guess|hope|seem|seems|appear|appears|if|once|unless|until|whether|try|trying|tried|attempt|attempted|need|needs|want|wants|must)$/i;
/**
 * Words after a negation that make it an idiom, not a denial: "no doubt the tests pass", "not only
 * do they pass", "no wonder", "don't worry" (red team, issue 13: each read as "did not pass", so a
 * failed or missing citation went unchecked).
 */
const NOT_A_NEGATION =
  /^(?:doubt|doubts|wonder|question|questions|only|worry|worries|problem|problems|issue|issues|surprise|kidding|exception|exceptions)$/i;
/** Words after the success word that take it back ("changed: none", "fixed nothing"). */
const NEGATED_AFTER = /^\s*(?:[:=-]\s*)?(?:none|nothing|no\b|0\b|zero\b)/i;
/** Where a clause stops, for reading the words before a success word. */
const CLAUSE_STOP = /[,;:()[\]]|\bobs-\d+\b|\bbut\b|\bhowever\b|\bwhile\b|\balthough\b|\bthough\b/gi;

/** Every success assertion of a claim, in order. */
export function findAssertions(prose: string): Assertion[] {
  const found: Assertion[] = [];
  const taken: Array<[number, number]> = [];
  for (const p of PATTERNS) {
    for (const m of prose.matchAll(p.re)) {
      const index = m.index;
      const end = index + m[0].length;
      if (taken.some(([a, b]) => index < b && end > a)) continue;
      const after = prose.slice(end, end + 40);
      if (p.notBefore?.test(after)) continue;
      const before = wordsBefore(prose, index);
      const previous = before.at(-1) ?? '';
      // "the updated file", "a working copy": an adjective, not a claim that something was done.
      if (p.kind !== 'check' && DETERMINER.test(previous)) continue;
      taken.push([index, end]);
      const kind: AssertionKind = p.kind === 'success' ? (CHECK_CONTEXT.test(prose) ? 'check' : 'verified') : p.kind;
      const negated =
        !p.negationInside &&
        (before.some((w, i) => NEGATION.test(w) && !NOT_A_NEGATION.test(before[i + 1] ?? '')) ||
          /\bfail(?:s|ed)?\s+to\b/i.test(before.join(' ')) ||
          NEGATED_AFTER.test(after));
      const hedged =
        before.some((w, i) => HEDGE.test(w) && !(/^once$/i.test(w) && /^(?:again|more)$/i.test(before[i + 1] ?? ''))) ||
        (previous.toLowerCase() === 'to' && !/^(?:managed|able)$/i.test(before.at(-2) ?? '')) ||
        /\?\s*$/.test(prose);
      found.push({ kind, word: m[0], index, end, negated, hedged });
    }
  }
  return found.sort((a, b) => a.index - b.index);
}

/** Up to four words before `index`, back to the start of its clause. */
function wordsBefore(prose: string, index: number): string[] {
  const head = prose.slice(Math.max(0, index - 200), index);
  let from = 0;
  for (const m of head.matchAll(CLAUSE_STOP)) from = m.index + m[0].length;
  return (head.slice(from).match(/[\p{L}\p{N}']+/gu) ?? []).slice(-4);
}
