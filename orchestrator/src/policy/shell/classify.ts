import { declaration, unset } from './builtins';
import { classifyCommand } from './commands';
import { evaluate, integerNode } from './evaluation';
import { Findings } from './findings';
import { directoryOf, programByPath } from './program-path';
import {
  fileRedirect,
  heredoc,
  lastCommand,
  NO_STDIN,
  redirectOperator,
  scriptFile,
  stdinScript,
  type Stdin,
} from './redirections';
import { childByField, childrenByField, type Syntax, type SyntaxNode } from './syntax';
import type { ShellAnalysis, ShellClassifier } from './types';
import { riskyVariable } from './variables';
import type { Inner, Verdict } from './verdict';
import { unwrap } from './wrappers';
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
/** Words in one command after brace expansion (`{a,b}{c,d}…` grows fast). */
const MAX_WORDS = 4096;
/** `bash -c` inside `bash -c` inside…: each level is parsed again, so the depth is capped. */
export const MAX_NESTED_SCRIPTS = 8;
/** Bounds the walk's recursion (and so the JavaScript stack) across nested scripts too. */
const MAX_WALK_DEPTH = 1000;
/** A line that does not parse and holds `((` is parsed a second time, spaced out, up to this length. */
const MAX_RESPACED_LENGTH = 64 * 1024;
/** Strings bash may evaluate again that are parsed (best effort, for deny rules) once a line is asked. */
const MAX_PAYLOADS = 64;

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

function assignmentOf(node: SyntaxNode): Assignment {
  const value = childByField(node, 'value');
  return { name: childByField(node, 'name')?.text ?? '', value: value ? wordOf(value).value : '' };
}

class Walker extends Findings {
  /**
   * Literal strings bash may evaluate again: parsed only if the line is asked anyway, so deny rules see their commands.
   */
  private deferred: Array<{ text: string; via: string[]; scope: Scope }> = [];
  private payloads = 0;
  /** Words and input that a redirected_statement hands to its last command. */
  private readonly pending = new Map<SyntaxNode, { extra: Word[]; stdin?: Stdin }>();
  /** Current recursion depth of the walk, across nested scripts (a counter: no allocation per node). */
  private depth = 0;

  constructor(private readonly parse: ParseFn) {
    super();
  }

  script(source: string, via: string[], outer: Scope | undefined): void {
    const nesting = outer ? outer.nesting + 1 : 0;
    if (nesting > MAX_NESTED_SCRIPTS) {
      this.problems.add(`scripts are nested more than ${MAX_NESTED_SCRIPTS} deep`);
      return;
    }
    let syntax = this.parse(source);
    const where = via.length ? `${via.at(-1)}: ` : '';
    for (const p of syntax.problems) this.problems.add(where + p);
    if (
      source.length <= MAX_RESPACED_LENGTH &&
      syntax.problems.length &&
      syntax.problems.every((p) => /^the command (does not parse|is incomplete)/.test(p)) &&
      source.includes('((')
    ) {
      // `$((cmd) | x)` is a command substitution to bash (arithmetic fails, so it re-reads it) but a
      // parse error to tree-sitter. The line stays unfollowable; the spaced-out reading, if it
      // parses, is walked instead, so deny rules still see the commands in it.
      const spaced = this.parse(source.replace(/\(\(/g, '( ('));
      if (spaced.problems.length === 0) syntax = spaced;
    }
    const scope: Scope = { via, stdin: NO_STDIN, nesting };
    const ev = evaluate(syntax.root);
    for (const p of ev.problems) this.problems.add(where + p);
    this.conditions.push(...ev.conditions.map((c) => ({ ...c, problem: where + c.problem })));
    for (const [name, binding] of ev.bindings) {
      const list = this.bindings.get(name);
      if (list) list.push(binding);
      else this.bindings.set(name, [binding]);
    }
    for (const p of ev.payloads) this.deferred.push({ text: p.text, via: [...via, p.label], scope });
    this.walk(syntax.root, scope);
  }

  /**
   * Settles what is only known once every script of the line has been seen: the conditions on
   * variables; then, if the line is asked anyway, the strings bash could evaluate are parsed.
   */
  finish(): void {
    this.settle();
    // Each round parses strings found by the previous one, one script deeper: MAX_NESTED_SCRIPTS bounds it.
    while (this.problems.size > 0 && this.deferred.length > 0) {
      const deferred = this.deferred;
      this.deferred = [];
      for (const d of deferred) {
        if (++this.payloads > MAX_PAYLOADS) {
          this.problems.add(`more than ${MAX_PAYLOADS} strings bash may evaluate: the rest are not parsed`);
          return;
        }
        this.script(d.text, d.via, d.scope);
      }
      this.settle();
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
          this.emit(
            [`${a.name}=${a.value}`],
            { class: 'unknown', reason: `sets ${a.name}, which changes what later commands run` },
            scope.via,
          );
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
      if (c.type === 'variable_assignment' && (node.type === 'command' || node.type === 'declaration_command'))
        this.walkChildren(c, s);
      else this.walk(c, s);
    }
  }

  private command(node: SyntaxNode, scope: Scope): void {
    const pending = this.pending.get(node);
    const name = childByField(node, 'name');
    const args = node.children.filter((c) => c.field === 'argument');
    let stdin = pending?.stdin;
    for (const r of childrenByField(node, 'redirect')) {
      if (r.type === 'herestring_redirect')
        stdin = { kind: 'herestring', word: wordOf(r.children.find((c) => c.named) ?? r) };
      if (r.type === 'file_redirect' && redirectOperator(r) === '<')
        stdin = { kind: 'file', word: wordOf(childByField(r, 'destination') ?? r) };
    }
    const nodes = name ? [name, ...args] : args;
    const typed = wordsOf(nodes, node);
    // A word only known at run time that is an integer (`wait $pid`, `$?`) cannot be an option such as `-v`.
    if (typed.length === nodes.length) {
      typed.forEach((w, i) => {
        const integer = w.literal ? null : integerNode(nodes[i]!);
        if (integer) w.numeric = integer;
      });
    }
    const words: Word[] = [];
    for (const w of [...typed, ...(pending?.extra ?? [])]) {
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

  /**
   * `declare`, `local`, `export`, `readonly`, `typeset`, `unset`: judged in builtins.ts, like their `builtin declare …`
   * spelling.
   */
  private declaration(node: SyntaxNode, scope: Scope): void {
    const keyword = node.children[0]?.text ?? node.type;
    const argv = [keyword];
    const words: Word[] = [];
    for (const c of node.children.slice(1)) {
      if (c.type === 'variable_assignment') {
        const a = assignmentOf(c);
        const value = childByField(c, 'value');
        argv.push(`${a.name}=${a.value}`);
        words.push({ value: `${a.name}=${a.value}`, literal: value ? wordOf(value).literal : true, pattern: '' });
      } else if (c.named && c.type !== 'comment') {
        const w = wordOf(c);
        argv.push(w.value);
        words.push(w);
      }
    }
    this.verdict(argv, keyword === 'unset' ? unset(words) : declaration(keyword, words), scope);
    this.walkChildren(node, scope);
  }

  /** Records a command's verdict: its problem and conditions, the command, then what it runs. */
  private verdict(argv: string[], verdict: Verdict, scope: Scope): void {
    if (verdict.problem) this.problems.add(verdict.problem);
    this.conditions.push(...(verdict.conditions ?? []));
    for (const w of verdict.writes ?? []) this.write(w);
    this.emit(verdict.argv ?? argv, verdict, scope.via);
    for (const inner of verdict.inner ?? []) this.inner(inner, argv, scope, []);
  }

  private fileRedirect(r: SyntaxNode, scope: Scope): void {
    const effect = fileRedirect(r);
    if (effect.connects) return this.emit(effect.connects.argv, effect.connects.verdict, scope.via);
    if (effect.condition) this.conditions.push(effect.condition);
    if (effect.problem) this.problems.add(effect.problem);
    if (effect.write !== undefined) this.write(effect.write);
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
    // A function the line defines is classified by its name like any command: `rm() { :; }; rm -rf x`
    // is still judged as rm (the definition may not be the one that runs, or may not run at all).
    const cmd = basename(name.value);
    argv[0] = cmd;
    const dir = directoryOf(name.value, cmd);
    const byPath = dir === undefined ? undefined : programByPath(name.value, cmd, dir);
    if (byPath) {
      if (byPath.problem) this.problems.add(byPath.problem);
      argv[0] = byPath.argv0;
      return this.emit(argv, byPath.verdict, scope.via);
    }
    const wrapped = unwrap(cmd, words);
    if (wrapped && (wrapped.self || wrapped.runs.length)) {
      if (wrapped.self?.problem) this.problems.add(wrapped.self.problem);
      if (wrapped.self) this.emit(wrapped.self.argv ?? argv, wrapped.self, scope.via);
      for (const w of wrapped.writes ?? []) this.write(w.value);
      const inherited = [
        ...assignments,
        ...(wrapped.assignments ?? []).map((w) => ({
          name: w.value.split('=')[0]!,
          value: w.value.slice(w.value.indexOf('=') + 1),
        })),
      ];
      for (const inner of wrapped.runs) this.inner(inner, argv, scope, inherited);
      return;
    }
    let verdict = classifyCommand(cmd, words.slice(1));
    if (cmd === 'git' && dir !== undefined) {
      // Only `git` found on PATH is gatehouse's wrapper, which disables programs the repository's
      // config names (filters, textconv…); `/usr/bin/git` is the bare program, so no rule about
      // `git …` may allow it (deny rules still see it).
      const problem =
        `${short(name.value)} bypasses the sandbox's git wrapper, so the repository's config may name ` +
        `programs it runs`;
      this.problems.add(problem);
      if (verdict.class === 'read-only') verdict = { ...verdict, class: 'unknown', reason: problem };
    }
    const risky = assignments.find((a) => riskyVariable(a.name, a.value));
    if (risky) {
      // `PATH=/tmp/x git status` may not run git at all: its text must not be trusted to rules.
      this.problems.add(`${risky.name} is set for ${cmd}, so what it runs cannot be seen`);
      verdict = { ...verdict, class: 'unknown', reason: `${risky.name} is set, which can make ${cmd} run other code` };
    }
    this.verdict(argv, verdict, scope);
  }

  private inner(inner: Inner, argv: string[], scope: Scope, assignments: Assignment[]): void {
    const via = [...scope.via, inner.label];
    if ('argv' in inner) return this.run(inner.argv, { ...scope, via }, assignments);
    if ('file' in inner) return this.emit(argv, scriptFile(inner.label, inner.file), scope.via);
    if ('script' in inner) return this.shellString(inner.script, via, argv, scope, inner.opaque);
    const fed = stdinScript(inner.label, scope.stdin);
    if ('script' in fed) return this.shellString(fed.script, [...scope.via, fed.label], argv, scope);
    if (fed.problem) this.problems.add(fed.problem);
    return this.emit(argv, fed.verdict, scope.via);
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
}

/** A classifier over any parser; parser.ts builds the tree-sitter one. */
export function createClassifier(parse: ParseFn): ShellClassifier {
  return {
    classify(command: string): ShellAnalysis {
      const walker = new Walker(parse);
      if (command.length > MAX_SOURCE_LENGTH) {
        walker.problems.add(
          `the command is ${command.length} characters long; only commands up to ${MAX_SOURCE_LENGTH} are analysed`,
        );
      } else {
        walker.script(command, [], undefined);
        walker.finish();
      }
      return walker.result();
    },
  };
}
