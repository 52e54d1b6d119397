import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The project's rule: no source file over 400 lines (a merge can push one past it unnoticed). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_ROOTS = ['orchestrator/src', 'sandbox-agent/src', 'shared/src', 'egress-proxy/src', 'bench', 'scripts'];
const MAX_LINES = 400;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist' && e.name !== 'build' && e.name !== 'results')
        out.push(...sources(full));
    } else if (/\.(ts|mjs|cjs|js)$/.test(e.name)) out.push(full);
  }
  return out;
}

describe('source files', () => {
  it(`are at most ${MAX_LINES} lines`, () => {
    const files = SOURCE_ROOTS.flatMap((r) => sources(path.join(ROOT, r)));
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((f) => ({ file: path.relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
