import { MAX_OUTPUT_CAP, type ChangedFile, type InvocationOf } from '@gatehouse/shared';
import type { Outcome, PrimitiveContext } from './context';

const STATUS: Record<string, ChangedFile['status']> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', T: 'type_changed' };

/** The workspace's changes since start-up: a binary-safe git diff and the list of changed paths. */
export async function changes(_input: InvocationOf<'changes'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const { baseline, tree: base } = ctx.baseline;
  const current = await baseline.writeTree('current.index', ctx.signal, ctx.timeoutMs);
  const nameStatus = await baseline.git(['diff', '--name-status', '-z', '--no-renames', base, current], 'current.index', ctx.signal, ctx.timeoutMs, MAX_OUTPUT_CAP);
  const parts = nameStatus.stdout.split('\0').filter((p) => p !== '');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    files.push({ path: parts[i + 1]!, status: STATUS[parts[i]!.charAt(0)] ?? 'modified' });
  }
  const diff = await baseline.git(
    ['diff', '--binary', '--no-color', '--no-ext-diff', '--no-renames', '--full-index', base, current],
    'current.index',
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
