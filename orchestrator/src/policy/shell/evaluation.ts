import { childByField, childrenByField, type SyntaxNode } from './syntax';
import {
  ANY_VALUE,
  baseName,
  hasCommandText,
  nameProblem,
  riskyVariable,
  type Binding,
  type Condition,
} from './variables';
import { short, wordOf, wordsOf } from './words';

/**
 * Places where bash evaluates text a second time, out of sight of a syntax tree.
 *
 * Arithmetic (`$((x))`, `((…))`, `for ((…))`, `[[ x -eq y ]]`, array subscripts, `${s:off:len}`)
 * evaluates the *value* of a variable as an expression, and an array subscript in that value is
 * expanded, `$(…)` included: after `x='a[$(rm -rf ~)]'`, `echo $((x))` runs `rm -rf ~`. The same
 * holds for a variable name given to a builtin (`[ -v 'a[$(cmd)]' ]`), and `${x@P}` runs the
 * command substitutions in x's value.
 *
 * So each arithmetic operand must be a number or a variable that only ever holds integers. Commands
 * run in a fresh `bash -c` with a fixed environment (sandbox-agent's scrubbedEnv): a variable the
 * line never sets holds no attacker text. Whether the line sets a variable to something other than
 * an integer (`x='…'`, `read x`, `x=$(cat f)`, `for x in *`) is only known once every script of the
 * line (`bash -c '…'` included) has been seen, so uses are recorded as conditions, resolved by the
 * walker at the end.
 */

/** What one script tells the walker. */
export interface Evaluation {
  /** Problems found for certain. */
  problems: string[];
  /** Problems that hold unless the named variables only ever hold integers. */
  conditions: Condition[];
  /** Every setting of a variable in the script. */
  bindings: Array<[string, Binding]>;
  /**
   * Literal strings bash may evaluate (they hold `$(…)` or backticks): parsed when the line is asked, so deny rules
   * still see their commands.
   */
  payloads: Array<{ label: string; text: string }>;
}

const NUMBER = /^([+-]?\d+|0[xX][0-9a-fA-F]+|\d+#[0-9A-Za-z@_]+)$/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Parameters bash sets to an integer. */
const INTEGER_SPECIALS = new Set(['?', '#', '$', '!']);
/** Comparisons whose operands `[[ ]]` evaluates as arithmetic. */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** Containers of arithmetic whose named children are all arithmetic too. */
const ARITHMETIC_CONTAINERS = new Set([
  'binary_expression',
  'unary_expression',
  'postfix_expression',
  'parenthesized_expression',
  'ternary_expression',
]);

/**
 * Variables bash sets itself from data (input lines, matches, the last argument, arguments): never
 * known to hold integers. Positional parameters (`1`, `2`…) are treated the same way.
 */
export const IMPLICIT = new Set([
  'REPLY',
  'MAPFILE',
  'READLINE_LINE',
  'OPTARG',
  'BASH_REMATCH',
  'COPROC',
  '_',
  'PWD',
  'OLDPWD',
  'DIRSTACK',
  'BASH_COMMAND',
  'BASH_ARGV',
  'FUNCNAME',
  'BASH_SOURCE',
  'COMP_WORDS',
  'COMPREPLY',
  '@',
  '*',
  '0',
  '-',
]);

/**
 * When a node is an integer whatever happens: `[]`; when it is one provided some variables only
 * hold integers: their names; otherwise null. (`$((…))` counts as an integer: its own operands are
 * checked where it stands.)
 */
export function integerNode(node: SyntaxNode): string[] | null {
  switch (node.type) {
    case 'number':
    case 'arithmetic_expansion':
      return [];
    case 'word':
    case 'raw_string':
    case 'ansi_c_string': {
      const w = wordOf(node);
      return w.literal && (w.value === '' || NUMBER.test(w.value)) ? [] : null;
    }
    case 'simple_expansion': {
      const c = node.children.find((n) => n.named);
      if (c?.type === 'special_variable_name') return INTEGER_SPECIALS.has(c.text) ? [] : [c.text];
      return c?.type === 'variable_name' ? [c.text] : null;
    }
    case 'expansion': {
      const inner = node.children.filter((n) => n.type !== '${' && n.type !== '}');
      if (inner[0]?.type === '#' && inner.length === 2) return []; // ${#x}: a length
      if (inner.length === 1 && inner[0]!.type === 'variable_name') return [inner[0]!.text];
      if (inner.length === 1 && inner[0]!.type === 'special_variable_name')
        return INTEGER_SPECIALS.has(inner[0]!.text) ? [] : [inner[0]!.text];
      return null;
    }
    case 'string': {
      const parts = node.children.filter((n) => n.named);
      if (parts.length === 0) return [];
      if (parts.length === 1 && parts[0]!.type !== 'string_content') return integerNode(parts[0]!);
      const w = wordOf(node);
      return w.literal && NUMBER.test(w.value) ? [] : null;
    }
  }
  return null;
}

/**
 * Names a literal word could set when given to a builtin: `n`, `n=1`, `a[0]`, and a name attached
 * to an option that takes one (`printf -vn`, `read -ran`, `wait -pn`).
 */
function namesIn(value: string): string[] {
  const out: string[] = [];
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?=$|\[|\+?=)/.exec(value);
  if (m) out.push(m[1]!);
  if (/^-[A-Za-z]/.test(value)) {
    const cluster = baseName(value);
    for (let i = 1; i < cluster.length - 1; i++)
      if ('vap'.includes(cluster[i]!) && IDENT.test(cluster.slice(i + 1))) out.push(cluster.slice(i + 1));
  }
  return out;
}

/** The literal parts of an assignment's value (not what its substitutions print). */
function literalText(node: SyntaxNode): string {
  switch (node.type) {
    case 'word':
    case 'raw_string':
    case 'ansi_c_string':
    case 'number':
      return wordOf(node).value;
    case 'string':
      return node.children
        .filter((c) => c.type === 'string_content')
        .map((c) => wordOf({ ...c, type: 'word' }).value)
        .join('');
    case 'concatenation':
      return node.children.map(literalText).join('');
  }
  return '';
}

export function evaluate(root: SyntaxNode): Evaluation {
  const ev: Evaluation = { problems: [], conditions: [], bindings: [], payloads: [] };
  const problem = (p: string) => ev.problems.push(p);
  const bind = (name: string, integer: string[] | null, text?: string) =>
    ev.bindings.push([baseName(name), text === undefined ? { integer } : { integer, text }]);
  /** A value's text when it is one literal word (not an array, not a substitution). */
  const literal = (n: SyntaxNode) => {
    if (!['word', 'raw_string', 'ansi_c_string', 'string', 'concatenation', 'number'].includes(n.type))
      return undefined;
    const w = wordOf(n);
    return w.literal ? w.value : undefined;
  };
  /** `i=…` in `for ((i=…; …; i=…))`: arithmetic, so always an integer. */
  const arithmeticAssignments = new Set<SyntaxNode>();

  const use = (label: string, names: string[]) => {
    if (names.length)
      ev.conditions.push({
        names,
        problem:
          `${label}: bash evaluates ${names.join(', ')} as arithmetic, and a value such as a[$(cmd)] there ` +
          `runs cmd`,
      });
  };
  const unsafe = (label: string, n: SyntaxNode) => {
    problem(
      `${label}: bash evaluates ${short(n.text)} as arithmetic, where a value only known at run time can run commands`,
    );
    const w = wordOf(n);
    if (w.literal && hasCommandText(w.value)) ev.payloads.push({ label, text: w.value });
  };

  /** Nodes already judged as arithmetic: each is judged once, however contexts nest. */
  const judged = new Set<SyntaxNode>();
  /** One arithmetic expression: every operand must be a number or an integer variable. */
  const arithmetic = (node: SyntaxNode, label: string) => {
    const stack = [node];
    for (let n = stack.pop(); n; n = stack.pop()) {
      if (judged.has(n)) continue;
      judged.add(n);
      // A nested $((…)) is checked on its own.
      if (!n.named || n.type === 'comment' || n.type === 'number' || n.type === 'arithmetic_expansion') continue;
      if (
        n.type === 'word' ||
        n.type === 'variable_name' ||
        n.type === 'raw_string' ||
        (n.type === 'string' && n.children.every((c) => !c.named || c.type === 'string_content'))
      ) {
        const w = wordOf(n);
        if (!w.literal) unsafe(label, n);
        else if (IDENT.test(w.value)) use(label, [w.value]);
        else if (!NUMBER.test(w.value)) unsafe(label, n);
      } else if (n.type === 'subscript') {
        use(label, [childByField(n, 'name')?.text ?? n.text]); // the index is checked where the subscript is found
      } else if (n.type === 'variable_assignment') {
        const name = childByField(n, 'name');
        if (name?.type === 'subscript') use(label, [childByField(name, 'name')?.text ?? name.text]);
        const value = childByField(n, 'value');
        if (value) stack.push(value);
      } else if (n.type === 'binary_expression' && childByField(n, 'operator')?.text === '=') {
        // `x = expr` gives x an integer without reading it.
        const left = childByField(n, 'left');
        for (const c of n.children) if (c !== left || (c.type !== 'variable_name' && c.type !== 'word')) stack.push(c);
      } else if (ARITHMETIC_CONTAINERS.has(n.type)) {
        stack.push(...n.children);
      } else {
        const names = integerNode(n);
        if (names) use(label, names);
        else unsafe(label, n);
      }
    }
  };

  interface Item {
    node: SyntaxNode;
    bracket?: '[' | '[[';
  }
  const stack: Item[] = [{ node: root }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { node: n } = item;
    let bracket = item.bracket;
    switch (n.type) {
      case 'variable_assignment': {
        const name = childByField(n, 'name');
        const value = childByField(n, 'value');
        const target = name?.type === 'subscript' ? (childByField(name, 'name')?.text ?? '') : (name?.text ?? '');
        if (arithmeticAssignments.has(n)) {
          bind(target, []);
          break;
        }
        bind(target, value ? integerNode(value) : [], value ? literal(value) : '');
        const text = value ? literalText(value) : '';
        if (hasCommandText(text)) ev.payloads.push({ label: `${target}=`, text });
        break;
      }
      case 'for_statement': {
        const variable = childByField(n, 'variable');
        if (!variable) break;
        const values = childrenByField(n, 'value');
        const integers =
          values.length > 0 &&
          values.every((c) => integerNode(c)?.length === 0 || /^\{-?\d+\.\.-?\d+(\.\.-?\d+)?\}$/.test(c.text));
        if (integers || values.length === 0) bind(variable.text, integers ? [] : null);
        else for (const c of values) bind(variable.text, null, /[*?[{]/.test(c.text) ? undefined : literal(c));
        if (riskyVariable(variable.text, ANY_VALUE))
          problem(`the for loop sets ${variable.text}, which changes what later commands run`);
        break;
      }
      case 'c_style_for_statement':
        for (const c of n.children) {
          if (c.field !== 'initializer' && c.field !== 'condition' && c.field !== 'update') continue;
          if (c.type === 'variable_assignment') arithmeticAssignments.add(c);
          arithmetic(c, 'for ((…))');
        }
        break;
      case 'compound_statement':
        if (n.children[0]?.type === '((') for (const c of n.children) arithmetic(c, '((…))');
        break;
      case 'arithmetic_expansion':
        for (const c of n.children) arithmetic(c, '$((…))');
        break;
      case 'array':
        // `a=([i]=v …)`: an indexed array's explicit index is arithmetic (tree-sitter keeps it as text).
        for (const c of n.children) {
          const index = /^\[([^\]]*)\]\+?=/.exec(c.text)?.[1];
          if (index === undefined || NUMBER.test(index)) continue;
          const name = /^(?:([A-Za-z_][A-Za-z0-9_]*)|\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\})$/.exec(
            index,
          );
          if (name) use('an array index', [(name[1] ?? name[2] ?? name[3])!]);
          else
            problem(
              `${short(c.text)}: bash evaluates the array index as arithmetic, where a value only known at run time ` +
                `can run commands`,
            );
        }
        break;
      case 'subscript': {
        const index = childByField(n, 'index');
        if (index && !(index.type === 'word' && (index.text === '@' || index.text === '*')))
          arithmetic(index, `the subscript of ${childByField(n, 'name')?.text ?? 'an array'}`);
        break;
      }
      case 'expansion': {
        const parts = n.children.filter((c) => c.type !== '${' && c.type !== '}');
        const variable = parts.find((c) => c.type === 'variable_name' || c.type === 'subscript');
        const name =
          variable?.type === 'subscript' ? (childByField(variable, 'name')?.text ?? '') : (variable?.text ?? '');
        if (/@P\}$/.test(n.text))
          problem(`${short(n.text)}: prompt expansion runs the command substitutions in the value`);
        if (parts[0]?.type === '!' && !/^\$\{!([A-Za-z_][A-Za-z0-9_]*(\[[@*]\]|[@*])|#)\}$/.test(n.text)) {
          problem(`${short(n.text)}: indirect expansion evaluates a name held in a variable, subscript included`);
        }
        const colon = parts.findIndex((c) => c.type === ':');
        if (colon >= 0) for (const c of parts.slice(colon + 1)) if (c.type !== ':') arithmetic(c, `${short(n.text)}`);
        if (parts.some((c) => c.type === '=' || c.type === ':=')) {
          bind(name, null);
          if (riskyVariable(name, ANY_VALUE))
            problem(`${short(n.text)} sets ${name}, which changes what later commands run`);
        }
        break;
      }
      case 'test_command':
        bracket = n.children[0]?.type === '[[' ? '[[' : '[';
        break;
      case 'command_substitution':
      case 'process_substitution':
        bracket = undefined;
        break;
      case 'binary_expression': {
        const op = childByField(n, 'operator');
        if (bracket === '[[' && op?.type === 'test_operator' && ARITHMETIC_TESTS.has(op.text)) {
          for (const c of n.children) if (c.field === 'left' || c.field === 'right') arithmetic(c, `[[ ${op.text} ]]`);
        }
        break;
      }
      case 'unary_expression': {
        const op = childByField(n, 'operator');
        if (bracket && op?.type === 'test_operator' && (op.text === '-v' || op.text === '-R')) {
          const operand = n.children.find((c) => c.named && c !== op);
          const w = operand && wordOf(operand);
          const p = w && nameProblem(`${bracket} ${op.text}`, w, false);
          if (p) problem(p);
          if (w?.literal && hasCommandText(w.value))
            ev.payloads.push({ label: `${bracket} ${op.text}`, text: w.value });
        }
        break;
      }
      case 'command':
      case 'declaration_command':
      case 'unset_command': {
        // A name given to any command may be one a builtin sets (`read n`, `printf -v n`, `command mapfile n`).
        const args =
          n.type === 'command'
            ? n.children.filter((c) => c.field === 'argument')
            : n.children.slice(1).filter((c) => c.named && c.type !== 'variable_assignment' && c.type !== 'comment');
        for (const w of wordsOf(args, n)) for (const name of namesIn(w.value)) bind(name, null);
        break;
      }
    }
    for (let i = n.children.length - 1; i >= 0; i--) stack.push({ node: n.children[i]!, bracket });
  }
  return ev;
}

/**
 * The variables that may hold something other than an integer, given every binding of the line.
 * (Positional parameters, `$1`…, are whatever the caller passed: callers treat digits as such too.)
 */
export function nonIntegers(bindings: ReadonlyMap<string, Binding[]>): Set<string> {
  const out = new Set(IMPLICIT);
  // `b=$a` makes b an integer only if a is one: a variable taints those set from it.
  const setFrom = new Map<string, string[]>();
  for (const [name, values] of bindings) {
    for (const v of values) {
      if (v.integer === null) out.add(name);
      for (const n of v.integer ?? []) {
        const list = setFrom.get(n);
        if (list) list.push(name);
        else setFrom.set(n, [name]);
      }
    }
  }
  for (const n of setFrom.keys()) if (/^\d+$/.test(n)) out.add(n);
  const work = [...out];
  for (let n = work.pop(); n !== undefined; n = work.pop()) {
    for (const m of setFrom.get(n) ?? []) {
      if (!out.has(m)) {
        out.add(m);
        work.push(m);
      }
    }
  }
  return out;
}
