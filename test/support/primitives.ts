import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { newId, type InvocationResult, type ResultData } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from './sandbox';

/** Shared fixture and helpers of the primitive tests (test/e2e/primitives-*.test.ts). */

export const LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

export const FILES: Record<string, string> = {
  'README.md': '# fixture\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/lib/b.ts': 'export const b = 2;\n// TODO: b\n',
  'src/lib/c.js': 'module.exports = 3;\n',
  'lines.txt': LINES,
  'edit-me.txt': 'alpha\nbeta\ngamma\n',
  'dup.txt': 'x = 1\ny = 2\nx = 1\nx = 1\n',
  'delete-me.txt': 'bye\n',
};

export const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** The result's data, checked to be of the expected kind (failing with the error otherwise). */
export function dataOf<K extends ResultData['kind']>(r: InvocationResult, kind: K): Extract<ResultData, { kind: K }> {
  expect(r.data?.kind, `${r.status} ${r.error?.code ?? ''}: ${r.error?.message ?? ''}`).toBe(kind);
  return r.data as Extract<ResultData, { kind: K }>;
}

/** Host directories and files a test file made; removed once its sandbox is torn down. */
export const hostDirs: string[] = [];

/** One driver and sandbox for the enclosing describe block, torn down after it. */
export function useSandbox(files: Record<string, string> = FILES): { driver: SandboxDriver; sandbox: Sandbox } {
  const ctx = {} as { driver: SandboxDriver; sandbox: Sandbox };
  beforeAll(async () => {
    ctx.driver = await startDriver();
    const repoDir = makeRepo(files);
    hostDirs.push(repoDir);
    ctx.sandbox = await ctx.driver.createSandbox({ runId: newId('run'), repoDir });
  });
  afterAll(async () => {
    await ctx.driver?.close();
    for (const d of hostDirs) rmSync(d, { recursive: true, force: true });
  });
  return ctx;
}

export async function catFile(sandbox: Sandbox, file: string): Promise<string> {
  return sh(sandbox, `cat -- '${file}'`);
}
