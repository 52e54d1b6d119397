import type { Language, Tree } from 'web-tree-sitter';

/**
 * A plain-JavaScript copy of a tree-sitter syntax tree. Every property read on a web-tree-sitter
 * node is a call into WebAssembly, so the classifier copies the tree once with a cursor (the cheap
 * way to read it), frees the WebAssembly tree at once, and then works on ordinary objects: easy to
 * test, nothing to leak.
 */
export interface SyntaxNode {
  /** Grammar type: `command`, `word`, `ERROR`…; anonymous tokens keep their text (`|`, `>&`). */
  type: string;
  named: boolean;
  /** Field name in the parent (`name`, `argument`, `redirect`, `body`…), or null. */
  field: string | null;
  /** Offsets into the source string (web-tree-sitter counts UTF-16 units, like JavaScript). */
  start: number;
  end: number;
  text: string;
  children: SyntaxNode[];
}

export interface Syntax {
  root: SyntaxNode;
  /** Parse errors and copy limits; any entry means the line cannot be followed. */
  problems: string[];
}

/** Deeper than this, bash is not being written by hand: the rest is not copied (and not followed). */
export const MAX_DEPTH = 1000;
/** Copying costs about 1.5 µs a node; past this the line is too big to judge quickly. */
export const MAX_NODES = 100_000;

/** Type names and namedness by type id, read once per grammar rather than once per node. */
const typeTables = new WeakMap<Language, { types: string[]; named: boolean[] }>();
function typeTable(language: Language): { types: string[]; named: boolean[] } {
  let t = typeTables.get(language);
  if (!t) {
    const types = [...language.types];
    t = { types, named: types.map((_, id) => language.nodeTypeIsNamed(id)) };
    typeTables.set(language, t);
  }
  return t;
}

export function copyTree(tree: Tree, source: string): Syntax {
  const { types, named } = typeTable(tree.language);
  const fields = tree.language.fields;
  const cursor = tree.walk();
  const problems = new Set<string>();
  // Missing tokens can only exist in a tree with errors; asking each node costs a call into WebAssembly.
  const checkMissing = tree.rootNode.hasError;
  if (checkMissing) problems.add('the command does not parse as bash');
  let nodes = 0;
  // Recursion is bounded by MAX_DEPTH, so the JavaScript stack cannot overflow.
  const copy = (depth: number): SyntaxNode => {
    nodes++;
    const id = cursor.nodeTypeId;
    const start = cursor.startIndex;
    const end = cursor.endIndex;
    const type = types[id] ?? 'ERROR'; // the error type's id is outside the table
    const node: SyntaxNode = {
      type,
      named: named[id] ?? true,
      field: fields[cursor.currentFieldId] ?? null,
      start,
      end,
      text: source.slice(start, end),
      children: [],
    };
    if (checkMissing && cursor.nodeIsMissing)
      problems.add(`the command is incomplete (missing ${JSON.stringify(type)})`);
    if (!cursor.gotoFirstChild()) return node;
    if (depth >= MAX_DEPTH) problems.add(`the command is nested more than ${MAX_DEPTH} levels deep`);
    else {
      do {
        if (nodes >= MAX_NODES) {
          problems.add(`the command has more than ${MAX_NODES} syntax nodes`);
          break;
        }
        node.children.push(copy(depth + 1));
      } while (cursor.gotoNextSibling());
    }
    cursor.gotoParent();
    return node;
  };
  try {
    return { root: copy(0), problems: [...problems] };
  } finally {
    cursor.delete();
  }
}

export function childByField(node: SyntaxNode, field: string): SyntaxNode | undefined {
  return node.children.find((c) => c.field === field);
}

export function childrenByField(node: SyntaxNode, field: string): SyntaxNode[] {
  return node.children.filter((c) => c.field === field);
}
