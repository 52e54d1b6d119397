import { classifyCommand, DEV_SINKS, riskyVariable, type Verdict } from './commands';
import { childByField, childrenByField, type Syntax, type SyntaxNode } from './syntax';
import { COMMAND_CLASSES, type ShellAnalysis, type ShellClassifier, type SimpleCommand } from './types';
import { unwrap, type Inner } from './wrappers';
import { basename, expandBraces, isGlob, short, wordOf, wordsOf, type Word } from './words';

/**
 * Walks a bash syntax tree and lists every simple command the line would run, wherever it hides:
 * pipelines, lists, subshells, groups, `$()`, backticks, `<()`, here-documents fed to a shell,
 * control-flow bodies, functions and wrappers (`sudo`, `xargs`, `bash -c`…). Anything it cannot
 * follow (a command name only known at run time, `eval`, a parse error) is recorded as a problem,
 * which makes the whole line `unknown` and not followable, so the policy asks instead of guessing.
 */

/** A source to parse; parser.ts supplies tree-sitter, tests can supply anything. */
export type ParseFn = (source: string) => Syntax;

/** Longer lines are not analysed (parsing and copying cost grows with size): they are asked. */
export const MAX_SOURCE_LENGTH = 256 * 1024;
export const MAX_COMMANDS = 10_000;
/** Words in one command after brace expansion (`{a,b}{c,d}…` grows fast). */
const MAX_WORDS = 4096;
/** `bash -c` inside `bash -c` inside…: each level is parsed again, so the depth is capped. */
export const MAX_NESTED_SCRIPTS = 8;
/** Bounds the walk's recursion (and so the JavaScript stack) across nested scripts too. */
const MAX_WALK_DEPTH = 1000;

/** Where the standard input of a command comes from, as far as shells reading a script care. */
type Stdin =
  | { kind: 'none' | 'pipe' }
  | { kind: 'heredoc'; body: string; literal: boolean }
  | { kind: 'herestring'; word: Word }
  | { kind: 'file'; word: Word };

interface Scope {
  via: string[];
  stdin: Stdin;
  /** How many scripts deep (`bash -c` inside `bash -c`…). */
  nesting: number;
}

interface Assignment {
  name: string;
  value: string;
}

const NO_STDIN: Stdin = { kind: 'none' };
/** Directories whose programs are the system's own: `/usr/bin/git` is git, `./git` is not. */
const SYSTEM_DIRS = new Set(['/bin', '/usr/bin', '/usr/local/bin', '/sbin', '/usr/sbin', '/usr/local/sbin', '/opt/homebrew/bin']);
/** Project-local programs that are meant to be run by path. */
const LOCAL_TOOLS = new Set(['gradlew', 'mvnw', 'configure']);

function redirectOperator(r: SyntaxNode): string {
  const fd = r.children.find((c) => c.type === 'file_descriptor');
  const dest = childByField(r, 'destination');
  return r.text.slice((fd ? fd.end : r.start) - r.start, (dest ? dest.start : r.end) - r.start).trim();
}

/** The simple command a redirection after `body` applies to (bash binds it to the last one). */
function lastCommand(node: SyntaxNode): SyntaxNode | undefined {
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

function heredoc(r: SyntaxNode): Stdin {
  const start = r.children.find((c) => c.type === 'heredoc_start')?.text ?? '';
  const body = r.children.find((c) => c.type === 'heredoc_body');
  const text = body?.text ?? '';
  // A quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<\EOF`) means the body is passed on as written.
  if (/['"\\]/.test(start)) return { kind: 'heredoc', body: text, literal: true };
  const dynamic = body?.children.some((c) => c.type !== 'heredoc_content') ?? false;
  return { kind: 'heredoc', body: text.replace(/\\([$`\\\n])/g, (_, c: string) => (c === '\n' ? '' : c)), literal: !dynamic };
}

function assignmentOf(node: SyntaxNode): Assignment {
  const value = childByField(node, 'value');
  return { name: childByField(node, 'name')?.text ?? '', value: value ? wordOf(value).value : '' };
}

class Walker {
  readonly commands: SimpleCommand[] = [];
  readonly writes: string[] = [];
  readonly problems = new Set<string>();
  private readonly functions = new Set<string>();
  /** Words and input that a redirected_statement hands to its last command. */
  private readonly pending = new Map<SyntaxNode, { extra: Word[]; stdin?: Stdin }>();
  /** Current recursion depth of the walk, across nested scripts (a counter: no allocation per node). */
  private depth = 0;

  constructor(private readonly parse: ParseFn) {}

  script(source: string, via: string[], outer: Scope | undefined): void {
    const nesting = outer ? outer.nesting + 1 : 0;
    if (nesting > MAX_NESTED_SCRIPTS) {
      this.problems.add(`scripts are nested more than ${MAX_NESTED_SCRIPTS} deep`);
      return;
    }
    const syntax = this.parse(source);
    const where = via.length ? `${via.at(-1)}: ` : '';
    for (const p of syntax.problems) this.problems.add(where + p);
    this.collectFunctions(syntax.root);
    this.walk(syntax.root, { via, stdin: NO_STDIN, nesting });
  }

  result(): ShellAnalysis {
    const followable = this.problems.size === 0;
    let rank = this.writes.length ? COMMAND_CLASSES.indexOf('write') : 0;
    for (const c of this.commands) rank = Math.max(rank, COMMAND_CLASSES.indexOf(c.class));
    return {
      commands: this.commands, writes: this.writes, followable, problems: [...this.problems],
      class: followable ? COMMAND_CLASSES[rank]! : 'unknown',
    };
  }

  private collectFunctions(root: SyntaxNode): void {
    const stack = [root];
    for (let n = stack.pop(); n; n = stack.pop()) {
      if (n.type === 'function_definition') {
        const name = childByField(n, 'name');
        if (name) this.functions.add(wordOf(name).value);
      }
      stack.push(...n.children);
    }
  }

  private walk(node: SyntaxNode, scope: Scope): void {
    if (this.depth >= MAX_WALK_DEPTH) {
      this.problems.add(`the command is nested more than ${MAX_WALK_DEPTH} levels deep`);
      return;
    }
    this.depth++;
    try {
      this.visit(node, scope);
    } finally {
      this.depth--;
    }
  }

  private visit(node: SyntaxNode, scope: Scope): void {
    switch (node.type) {
      case 'comment':
        return;
      case 'command':
        return this.command(node, scope);
      case 'redirected_statement':
        return this.redirected(node, scope);
      case 'pipeline': {
        // tree-sitter-bash puts `| cat` after a here-document inside the redirect, starting with the `|`.
        let first = node.children[0]?.named ?? true;
        for (const c of node.children) {
          if (!c.named || c.type === 'comment') continue;
          this.walk(c, first ? scope : { ...scope, stdin: { kind: 'pipe' } });
          first = false;
        }
        return;
      }
      case 'variable_assignment': {
        const a = assignmentOf(node);
        if (riskyVariable(a.name, a.value)) {
          this.problems.add(`${a.name} is set, so what later commands run cannot be seen`);
          this.emit([`${a.name}=${a.value}`], { class: 'unknown', reason: `sets ${a.name}, which changes what later commands run` }, scope.via);
        }
        return this.walkChildren(node, scope);
      }
      case 'declaration_command':
      case 'unset_command':
        return this.declaration(node, scope);
      case 'file_redirect':
        this.fileRedirect(node, scope);
        break;
    }
    this.walkChildren(node, scope);
  }

  /** Children in a word position: their substitutions run, but get no special input. */
  private walkChildren(node: SyntaxNode, scope: Scope): void {
    const s = scope.stdin === NO_STDIN ? scope : { ...scope, stdin: NO_STDIN };
    for (const c of node.children) {
      // A prefix assignment's risk is judged with its command; only its value's substitutions are walked here.
      if (c.type === 'variable_assignment' && (node.type === 'command' || node.type === 'declaration_command')) this.walkChildren(c, s);
      else this.walk(c, s);
    }
  }

  private command(node: SyntaxNode, scope: Scope): void {
    const pending = this.pending.get(node);
    const name = childByField(node, 'name');
    const args = node.children.filter((c) => c.field === 'argument');
    let stdin = pending?.stdin;
    for (const r of childrenByField(node, 'redirect')) {
      if (r.type === 'herestring_redirect') stdin = { kind: 'herestring', word: wordOf(r.children.find((c) => c.named) ?? r) };
      if (r.type === 'file_redirect' && redirectOperator(r) === '<') stdin = { kind: 'file', word: wordOf(childByField(r, 'destination') ?? r) };
    }
    const words: Word[] = [];
    for (const w of [...wordsOf(name ? [name, ...args] : args, node), ...(pending?.extra ?? [])]) {
      let expanded = expandBraces(w);
      if (expanded && words.length + expanded.length > MAX_WORDS) expanded = null;
      if (!expanded) this.problems.add(`${short(w.value)}: brace expansion gives too many words`);
      words.push(...(expanded ?? [w]));
    }
    const assignments = node.children.filter((c) => c.type === 'variable_assignment').map(assignmentOf);
    this.run(words, { ...scope, stdin: stdin ?? scope.stdin }, assignments);
    this.walkChildren(node, scope);
  }

  private redirected(node: SyntaxNode, scope: Scope): void {
    const body = childByField(node, 'body');
    const redirects = childrenByField(node, 'redirect');
    const extra: Word[] = [];
    let stdin: Stdin | undefined;
    for (const r of redirects) {
      if (r.type === 'file_redirect') {
        // tree-sitter-bash reads `git >/dev/null push` as a redirect with two targets; bash passes `push` to git.
        const dests = childrenByField(r, 'destination');
        extra.push(...wordsOf(dests.slice(1)));
        if (redirectOperator(r) === '<' && dests[0]) stdin = { kind: 'file', word: wordOf(dests[0]) };
      } else if (r.type === 'heredoc_redirect') {
        extra.push(...wordsOf(childrenByField(r, 'argument')));
        stdin = heredoc(r);
      } else if (r.type === 'herestring_redirect') {
        stdin = { kind: 'herestring', word: wordOf(r.children.find((c) => c.named) ?? r) };
      }
    }
    const owner = body && lastCommand(body);
    if (owner) this.pending.set(owner, { extra, stdin });
    else if (extra.length) this.problems.add('words after the redirection of a compound command');
    if (body) this.walk(body, scope);
    for (const r of redirects) this.walk(r, { ...scope, stdin: NO_STDIN });
  }

  private declaration(node: SyntaxNode, scope: Scope): void {
    const keyword = node.children[0]?.text ?? node.type;
    const argv = [keyword];
    let risky: string | undefined;
    for (const c of node.children.slice(1)) {
      if (c.type === 'variable_assignment') {
        const a = assignmentOf(c);
        argv.push(`${a.name}=${a.value}`);
        if (riskyVariable(a.name, a.value)) {
          risky = a.name;
          this.problems.add(`${a.name} is set, so what later commands run cannot be seen`);
        }
      } else if (c.named && c.type !== 'comment') argv.push(wordOf(c).value);
    }
    this.emit(argv, risky
      ? { class: 'unknown', reason: `${keyword} sets ${risky}, which changes what later commands run` }
      : { class: 'read-only', reason: `${keyword} sets shell variables` }, scope.via);
    this.walkChildren(node, scope);
  }

  private fileRedirect(r: SyntaxNode, scope: Scope): void {
    const dest = childByField(r, 'destination');
    if (!dest || dest.type === 'process_substitution') return; // `> >(cmd)` feeds a command, not a file
    const op = redirectOperator(r);
    const target = wordOf(dest);
    if (/^\/dev\/(tcp|udp)\//.test(target.value)) {
      // bash itself opens a connection for these paths: `echo secret > /dev/tcp/host/80` needs no curl.
      return this.emit([`${op}${target.value}`], { class: 'network', reason: `the redirection to ${short(target.value)} opens a network connection` }, scope.via);
    }
    // `>&2` and `2>&1` duplicate a descriptor; `>&file` (no number) writes file, like `&>file`.
    const dup = (op === '>&' || op === '<&') && (op === '<&' || (target.literal && /^(\d+-?|-)$/.test(target.value)));
    if (!dup && ['>', '>>', '&>', '&>>', '>|', '<>', '>&'].includes(op)) this.write(target.value);
  }

  private write(target: string): void {
    if (!DEV_SINKS.has(target) && !this.writes.includes(target)) this.writes.push(target);
  }

  /** One simple command, as words; wrappers are unwrapped here. */
  private run(words: Word[], scope: Scope, assignments: Assignment[]): void {
    const name = words[0];
    if (!name) return;
    const argv = words.map((w) => w.value);
    if (!name.literal || isGlob(name.pattern)) {
      this.problems.add(`${short(name.value)}: the command name is only known at run time`);
      return this.emit(argv, { class: 'unknown', reason: 'the command name is only known at run time' }, scope.via);
    }
    const cmd = basename(name.value);
    argv[0] = cmd;
    if (this.functions.has(name.value)) {
      return this.emit(argv, { class: 'read-only', reason: `calls ${cmd}, a function defined in this command (its body is classified where it is defined)` }, scope.via);
    }
    const dir = name.value.includes('/') ? name.value.slice(0, name.value.length - cmd.length).replace(/\/+$/, '') || '/' : undefined;
    if (dir !== undefined && !SYSTEM_DIRS.has(dir) && !LOCAL_TOOLS.has(cmd) && !dir.endsWith('node_modules/.bin')) {
      // `./git status` is not git: a rule about `git status` must not allow it.
      this.problems.add(`${short(name.value)} is not the system ${cmd}: what it runs cannot be seen`);
      return this.emit(argv, { class: 'unknown', reason: `runs ${short(name.value)}, a program outside the system directories` }, scope.via);
    }
    const wrapped = unwrap(cmd, words);
    if (wrapped && (wrapped.self || wrapped.runs.length)) {
      if (wrapped.self) this.emit(argv, wrapped.self, scope.via);
      for (const w of wrapped.writes ?? []) this.write(w.value);
      const inherited = [...assignments, ...(wrapped.assignments ?? []).map((w) => ({ name: w.value.split('=')[0]!, value: w.value.slice(w.value.indexOf('=') + 1) }))];
      for (const inner of wrapped.runs) this.inner(inner, argv, scope, inherited);
      return;
    }
    let verdict = classifyCommand(cmd, words.slice(1));
    if (verdict.problem) this.problems.add(verdict.problem);
    const risky = assignments.find((a) => riskyVariable(a.name, a.value));
    if (risky) {
      // `PATH=/tmp/x git status` may not run git at all: its text must not be trusted to rules.
      this.problems.add(`${risky.name} is set for ${cmd}, so what it runs cannot be seen`);
      verdict = { ...verdict, class: 'unknown', reason: `${risky.name} is set, which can make ${cmd} run other code` };
    }
    this.emit(verdict.argv ?? argv, verdict, scope.via);
  }

  private inner(inner: Inner, argv: string[], scope: Scope, assignments: Assignment[]): void {
    const via = [...scope.via, inner.label];
    if ('argv' in inner) return this.run(inner.argv, { ...scope, via }, assignments);
    if ('file' in inner) {
      return this.emit(argv, { class: 'unknown', reason: `${inner.label} runs the script file ${short(inner.file.value)}, whose commands cannot be seen` }, scope.via);
    }
    if ('script' in inner) return this.shellString(inner.script, via, argv, scope, inner.opaque);
    const stdin = scope.stdin;
    switch (stdin.kind) {
      case 'heredoc':
        return this.shellString({ value: stdin.body, literal: stdin.literal, pattern: '' }, [...scope.via, `${inner.label} <<EOF`], argv, scope);
      case 'herestring':
        return this.shellString(stdin.word, [...scope.via, `${inner.label} <<<`], argv, scope);
      case 'file':
        return this.emit(argv, { class: 'unknown', reason: `${inner.label} runs the script file ${short(stdin.word.value)}, whose commands cannot be seen` }, scope.via);
      default:
        this.problems.add(`${inner.label} reads its script from ${stdin.kind === 'pipe' ? 'a pipe' : 'standard input'}, which cannot be seen`);
        return this.emit(argv, { class: 'unknown', reason: `${inner.label} runs a script it reads from ${stdin.kind === 'pipe' ? 'a pipe' : 'standard input'}` }, scope.via);
    }
  }

  /**
   * A script given as a string. A literal one is parsed and followed. One with expansions is only
   * known at run time: the line is not followable, but the visible text is still parsed so that a
   * deny rule about, say, `git push` still sees it.
   */
  private shellString(word: Word, via: string[], argv: string[], scope: Scope, opaque?: string): void {
    const label = via.at(-1)!;
    if (opaque) this.problems.add(opaque);
    else if (!word.literal) {
      this.problems.add(`${label}: the script is only known at run time`);
      this.emit(argv, { class: 'unknown', reason: `${label} runs a script only known at run time` }, scope.via);
    }
    this.script(word.value, via, scope);
  }

  private emit(argv: string[], verdict: Verdict, via: string[]): void {
    if (this.commands.length >= MAX_COMMANDS) {
      this.problems.add(`the command runs more than ${MAX_COMMANDS} commands`);
      return;
    }
    this.commands.push({ argv, text: argv.join(' '), class: verdict.class, reason: verdict.reason, via });
  }
}

/** A classifier over any parser; parser.ts builds the tree-sitter one. */
export function createClassifier(parse: ParseFn): ShellClassifier {
  return {
    classify(command: string): ShellAnalysis {
      const walker = new Walker(parse);
      if (command.length > MAX_SOURCE_LENGTH) {
        walker.problems.add(`the command is ${command.length} characters long; only commands up to ${MAX_SOURCE_LENGTH} are analysed`);
      } else {
        walker.script(command, [], undefined);
      }
      return walker.result();
    },
  };
}
