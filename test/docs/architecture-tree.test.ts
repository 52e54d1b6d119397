import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md draws the source folders; this keeps the drawing true. Each line of the
 * tree that names a folder (`name/` at some indentation) is a folder under the last shallower one.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_ROOTS = ['orchestrator/src', 'sandbox-agent/src', 'egress-proxy/src', 'shared/src'];

function drawnFolders(): string[] {
  const text = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const block = /## Folders[\s\S]*?```\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('docs/architecture.md has no tree under "## Folders"');
  const stack: { indent: number; path: string }[] = [];
  const folders: string[] = [];
  for (const line of block.split('\n')) {
    const m = /^( *)([\w.-]+(?:\/[\w.-]+)*)\/(\s|$)/.exec(line);
    if (!m) continue;
    const indent = m[1]!.length;
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    const full = stack.length > 0 ? `${stack.at(-1)!.path}/${m[2]}` : m[2]!;
    stack.push({ indent, path: full });
    folders.push(full);
  }
  return folders;
}

function realFolders(): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    out.push(rel);
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (e.isDirectory()) walk(`${rel}/${e.name}`);
    }
  };
  for (const r of SOURCE_ROOTS) walk(r);
  return out;
}

describe('docs/architecture.md', () => {
  it('draws every source folder, and no folder that does not exist', () => {
    const drawn = drawnFolders().filter((f) => SOURCE_ROOTS.some((r) => f === r || f.startsWith(`${r}/`)));
    expect(drawn.sort()).toEqual(realFolders().sort());
  });
});
