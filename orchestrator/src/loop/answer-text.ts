/**
 * A final answer as the claim judge reads it. The answer is the model's, so it is hostile input:
 * what a person would read as "pass" must read as "pass" here too, whatever characters spell it.
 *
 * - compatibility forms fold to their plain letters (NFKC: full-width `ｐａｓｓ`, mathematical bold);
 * - invisible characters go (zero-width spaces and joiners, soft hyphens, bidi controls: Unicode
 *   category Cf), and so do combining marks (`p̲a̲s̲s̲`);
 * - Cyrillic and Greek letters that look like Latin ones are read as those (`pаss` with a Cyrillic а);
 * - dashes read as `-` (so `obs‑2` with a non-breaking hyphen is a citation), curly quotes as straight;
 * - HTML tags and comments, which Markdown hides (`pa<b></b>ss`), go; so do `*` and `~`, which
 *   emphasise inside a word (`pa**ss**`);
 * - "nothing but", "none except" read as "only": "fixed nothing but a.js" is a claim to have fixed a.js.
 */
export function normalizeAnswer(text: string): string {
  const folded = text
    .normalize('NFKD')
    .replace(/[\p{Cf}\p{M}]/gu, '')
    .normalize('NFC')
    .replace(/[\u0131\u0370-\u03ff\u0400-\u052f\u0250-\u02af]/g, (c) => LOOKALIKES[c] ?? c)
    .replace(/[\u2010-\u2015\u2212\ufe58\ufe63]/g, '-')
    .replace(/[\u2018\u2019\u201a\u201b\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f\u2033]/g, '"')
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .replace(/[^\S\n]/g, ' ');
  return (
    folded
      .replace(/<!--[\s\S]{0,4000}?-->/g, '')
      .replace(/<\/?[A-Za-z][^<>\n]{0,200}>/g, '')
      // "fixed nothing but x.js" says "fixed only x.js", not "fixed nothing" (red team, issue 13).
      .replace(/\b(?:nothing|none)\s+(?:but|except(?:\s+for)?|other\s+than|besides|save\s+for)\b/gi, 'only')
  );
}

/** Removes the emphasis markers Markdown accepts inside a word; list markers are taken off before. */
export function stripEmphasis(text: string): string {
  return text.replace(/[*~]/g, '');
}

/** Cyrillic and Greek letters a reader cannot tell from Latin ones, and the Latin letter they pass for. */
const LOOKALIKES: Readonly<Record<string, string>> = Object.fromEntries(
  [
    // Cyrillic
    ['а', 'a'],
    ['в', 'b'],
    ['е', 'e'],
    ['ѕ', 's'],
    ['і', 'i'],
    ['ј', 'j'],
    ['к', 'k'],
    ['м', 'm'],
    ['н', 'h'],
    ['о', 'o'],
    ['р', 'p'],
    ['с', 'c'],
    ['т', 't'],
    ['у', 'y'],
    ['х', 'x'],
    ['ԁ', 'd'],
    ['һ', 'h'],
    ['ԛ', 'q'],
    ['ԝ', 'w'],
    ['ь', 'b'],
    ['А', 'A'],
    ['В', 'B'],
    ['Е', 'E'],
    ['Ѕ', 'S'],
    ['І', 'I'],
    ['Ј', 'J'],
    ['К', 'K'],
    ['М', 'M'],
    ['Н', 'H'],
    ['О', 'O'],
    ['Р', 'P'],
    ['С', 'C'],
    ['Т', 'T'],
    ['У', 'Y'],
    ['Х', 'X'],
    // Greek
    ['α', 'a'],
    ['ε', 'e'],
    ['ι', 'i'],
    ['κ', 'k'],
    ['ν', 'v'],
    ['ο', 'o'],
    ['ρ', 'p'],
    ['τ', 't'],
    ['υ', 'u'],
    ['χ', 'x'],
    ['Α', 'A'],
    ['Β', 'B'],
    ['Ε', 'E'],
    ['Ζ', 'Z'],
    ['Η', 'H'],
    ['Ι', 'I'],
    ['Κ', 'K'],
    ['Μ', 'M'],
    ['Ν', 'N'],
    ['Ο', 'O'],
    ['Ρ', 'P'],
    ['Τ', 'T'],
    ['Υ', 'Y'],
    ['Χ', 'X'],
    // IPA and dotless letters used as Latin ones
    ['ı', 'i'],
    ['ɑ', 'a'],
    ['ɡ', 'g'],
    ['ɩ', 'i'],
    ['ʏ', 'y'],
  ].map(([from, to]) => [from!, to!]),
);
