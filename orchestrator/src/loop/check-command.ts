/**
 * A command line with its insignificant whitespace removed: leading and trailing whitespace, and
 * each run of spaces and tabs outside quotes made one space. Everything bash reads differently is
 * kept: quoted text and backslash escapes verbatim, and newlines inside the line (a newline
 * separates commands, so `npm\ntest` is two commands, not `npm test`).
 */
export function normaliseCommand(command: string): string {
  // A trailing space after a backslash is escaped, part of the last word: only then is it kept.
  const text = command.trimStart().replace(/(?<!\\)\s+$/, '');
  let out = '';
  let quote: "'" | '"' | undefined;
  // Whether the last thing written is a separator (an escaped space, `\ `, is part of a word, not one).
  let separated = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (!quote && (c === ' ' || c === '\t')) {
      if (!separated) out += ' ';
      separated = true;
      continue;
    }
    separated = false;
    out += c;
    if (c === '\\' && quote !== "'" && i + 1 < text.length) out += text[++i];
    else if (quote && c === quote) quote = undefined;
    else if (!quote && (c === "'" || c === '"')) quote = c;
  }
  return out;
}

/**
 * Whether a command the model ran is the check command itself: equal once insignificant whitespace
 * is removed, and nothing more. `npm test || true`, `npm test; exit 0` or `npm test | tail` are
 * other commands (their exit code is not the check's), so they never count as the check.
 */
export function isCheckCommand(command: unknown, check: string): boolean {
  return typeof command === 'string' && normaliseCommand(command) === normaliseCommand(check);
}
