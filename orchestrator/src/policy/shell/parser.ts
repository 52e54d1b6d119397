import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import { createClassifier } from './classify';
import { copyTree, type Syntax } from './syntax';
import type { ShellClassifier } from './types';

/**
 * Loads tree-sitter's bash grammar (compiled to WebAssembly, shipped in the tree-sitter-bash npm
 * package) once per process. Loading is asynchronous; classifying afterwards is synchronous, so the
 * policy can decide inside the tool pipeline without awaiting.
 *
 * The .wasm files are found with Node's resolver from this module's URL. Under vitest that is the
 * source file; in the esbuild bundle (orchestrator/dist/gatehouse.mjs) it is the bundle, whose npm
 * dependencies stay external, so both resolve to the same node_modules.
 */

/** A pathological line must not stall the pipeline: parsing gives up after this long. */
export const PARSE_BUDGET_MS = 1000;

const resolveModule = createRequire(import.meta.url).resolve;
let loading: Promise<ShellClassifier> | undefined;

async function load(): Promise<ShellClassifier> {
  await Parser.init({ locateFile: () => resolveModule('web-tree-sitter/tree-sitter.wasm') });
  const bash = await Language.load(resolveModule('tree-sitter-bash/tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(bash);
  return createClassifier((source: string): Syntax => {
    const deadline = performance.now() + PARSE_BUDGET_MS;
    const tree = parser.parse(source, null, { progressCallback: () => performance.now() > deadline });
    if (!tree) {
      parser.reset();
      return {
        root: { type: 'program', named: true, field: null, start: 0, end: 0, text: '', children: [] },
        problems: [`parsing took longer than ${PARSE_BUDGET_MS} ms`],
      };
    }
    try {
      return copyTree(tree, source);
    } finally {
      tree.delete();
    }
  });
}

/** The shared classifier, loaded on first use. A failed load is not cached, so it can be retried. */
export async function loadShellClassifier(): Promise<ShellClassifier> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}
