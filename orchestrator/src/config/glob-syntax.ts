/**
 * What is wrong with a copy glob, if anything. Copy globs are paths relative to the repository
 * root in the syntax the project's matchers share (`*`, `**`, `?`, `[abc]`, `{a,b}`), so the
 * checks here are the ones a matcher would otherwise fail silently on: an unclosed bracket or
 * brace, a path that leaves the repository, an empty pattern.
 */
export function globProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'expected a glob, e.g. dist/** or *.log';
  if (pattern.includes('\0')) return 'a glob cannot contain a NUL character';
  if (pattern.startsWith('/') || /^[A-Za-z]:[\\/]/.test(pattern))
    return 'a glob is relative to the repository root: drop the leading /';
  if (pattern.split('/').includes('..')) return 'a glob cannot leave the repository (..)';
  if (pattern.endsWith('\\') && !pattern.endsWith('\\\\')) return 'a glob cannot end with a lone \\';
  let brackets = false;
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (brackets) {
      if (c === ']') brackets = false;
      else if (c === '/') return 'a [...] class cannot contain /';
    } else if (c === '[') {
      brackets = true;
      // `[]...]` and `[!]...]`: a ] first in the class is a member, not its end.
      if (pattern[i + 1] === ']') i++;
      else if ((pattern[i + 1] === '!' || pattern[i + 1] === '^') && pattern[i + 2] === ']') i += 2;
    } else if (c === '{') braces++;
    else if (c === '}' && --braces < 0) return 'a } has no { before it';
  }
  if (brackets) return 'a [ is not closed with ]';
  if (braces > 0) return 'a { is not closed with }';
  return undefined;
}
