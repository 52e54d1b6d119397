import { MAX_OUTPUT_CAP, type ChangedFile, type InvocationOf } from '@gatehouse/shared';
import type { Baseline } from '../baseline';
import type { Outcome, PrimitiveContext } from './context';

const STATUS: Record<string, ChangedFile['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  T: 'type_changed',
};

/** The workspace's changes since start-up: a binary-safe git diff and the list of changed paths. */
export async function changes(_input: InvocationOf<'changes'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const { baseline, tree: base } = ctx.baseline;
  // An index of its own: calls run side by side (children started together each export the
  // parent's workspace), and a shared one fails all but the first on git's index lock.
  return baseline.withScratchIndex((index) => diffAgainst(baseline, base, index, ctx));
}

async function diffAgainst(baseline: Baseline, base: string, index: string, ctx: PrimitiveContext): Promise<Outcome> {
  const current = await baseline.writeTree(index, ctx.signal, ctx.timeoutMs);
  const nameStatus = await baseline.git(
    ['diff', '--name-status', '-z', '--no-renames', base, current],
    index,
    ctx.signal,
    ctx.timeoutMs,
    MAX_OUTPUT_CAP,
  );
  const parts = nameStatus.stdout.split('\0').filter((p) => p !== '');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    files.push({ path: parts[i + 1]!, status: STATUS[parts[i]!.charAt(0)] ?? 'modified' });
  }
  const diff = await baseline.git(
    ['diff', '--binary', '--no-color', '--no-ext-diff', '--no-renames', '--full-index', base, current],
    index,
    ctx.signal,
    ctx.timeoutMs,
    ctx.outputCap,
  );
  return {
    status: 'ok',
    exitCode: 0,
    output: diff.truncated ? '' : diff.stdout,
    bytes: diff.stdoutBytes,
    truncated: diff.truncated,
    filesChanged: files.map((f) => f.path),
    data: { kind: 'changes', files },
  };
}
