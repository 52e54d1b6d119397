/**
 * The programs a setup or check command line starts, for the preflight check: the first word of
 * every simple command, after variable assignments and `env`. Deliberately plain: a word that is
 * only known at run time (`$TOOL`, `` `which x` ``) is skipped rather than guessed, and a shell
 * keyword is not a program. The policy's classifier answers a different question (what a command
 * may do), so it is not reused here.
 */
const KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'in',
  'function',
  'select',
  'time',
  '!',
  '{',
  '}',
  '[[',
  ']]',
]);
const SEPARATORS = new Set(['&&', '||', ';', '|', '&', '|&', '(', ')', '\n']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

export function programNames(command: string): string[] {
  const names: string[] = [];
  let atStart = true;
  let afterEnv = false;
  for (const word of words(command)) {
    if (word.separator) {
      atStart = true;
      afterEnv = false;
      continue;
    }
    if (!atStart) continue;
    const w = word.text;
    if (ASSIGNMENT.test(w)) continue;
    if (afterEnv && w.startsWith('-')) continue;
    if (KEYWORDS.has(w)) continue;
    atStart = false;
    if (word.dynamic || w === '') continue;
    if (w === 'env' || w === 'command' || w === 'exec' || w === 'nohup') {
      afterEnv = true;
      atStart = true;
      continue;
    }
    if (!names.includes(w)) names.push(w);
  }
  return names;
}

interface Word {
  text: string;
  separator: boolean;
  /** Holds an expansion whose value only the shell knows. */
  dynamic: boolean;
}

/** Splits a command line into words and separators, honouring quotes and backslashes. */
function* words(line: string): Generator<Word> {
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < line.length && line[i] !== '\n') i++;
      continue;
    }
    const two = line.slice(i, i + 2);
    if (SEPARATORS.has(two)) {
      yield { text: two, separator: true, dynamic: false };
      i += 2;
      continue;
    }
    if (SEPARATORS.has(c)) {
      yield { text: c, separator: true, dynamic: false };
      i++;
      continue;
    }
    let text = '';
    let dynamic = false;
    while (i < line.length) {
      const ch = line[i]!;
      if (ch === ' ' || ch === '\t' || SEPARATORS.has(ch)) break;
      if (ch === '\\' && i + 1 < line.length) {
        text += line[i + 1];
        i += 2;
      } else if (ch === "'") {
        const end = line.indexOf("'", i + 1);
        const stop = end < 0 ? line.length : end;
        text += line.slice(i + 1, stop);
        i = stop + 1;
      } else if (ch === '"') {
        let j = i + 1;
        while (j < line.length && line[j] !== '"') {
          if (line[j] === '\\' && j + 1 < line.length) j++;
          if (line[j] === '$' || line[j] === '`') dynamic = true;
          text += line[j];
          j++;
        }
        i = j + 1;
      } else {
        if (ch === '$' || ch === '`' || ch === '*' || ch === '?' || ch === '~') dynamic = true;
        text += ch;
        i++;
      }
    }
    yield { text, separator: false, dynamic };
  }
}
