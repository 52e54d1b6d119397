import { shellQuote } from '../sandbox/index';
import { programNames } from './program-names';
import type { CommandRunner } from './command-runner';

export interface ProgramCheck {
  program: string;
  for: 'setup' | 'check';
  found: boolean;
  /** Where it was found (a path, or the name of a shell builtin). */
  path?: string;
}

/**
 * Looks up, inside the sandbox and as the command user, every program the commands name: a name
 * on the image's PATH (or a shell builtin), a path relative to the workspace. One command for all,
 * so the check costs one round trip however many programs there are.
 */
export async function checkPrograms(
  run: CommandRunner,
  commands: ReadonlyArray<{ command: string; for: 'setup' | 'check' }>,
): Promise<ProgramCheck[]> {
  const wanted: Array<{ program: string; for: 'setup' | 'check' }> = [];
  for (const c of commands)
    for (const program of programNames(c.command))
      if (!wanted.some((w) => w.program === program)) wanted.push({ program, for: c.for });
  if (wanted.length === 0) return [];
  const script = wanted
    .map(({ program }) => {
      const q = shellQuote(program);
      return program.includes('/')
        ? `if [ -x ${q} ] && [ ! -d ${q} ]; then printf 'found\\t%s\\n' ${q}; else printf 'missing\\n'; fi`
        : `if p=$(command -v -- ${q}); then printf 'found\\t%s\\n' "$p"; else printf 'missing\\n'; fi`;
    })
    .join('\n');
  const result = await run(script, { purpose: 'preflight', timeoutMs: 30_000 });
  if (result.exitCode !== 0)
    throw new Error(
      `the preflight check could not run (exit ${String(result.exitCode)}): ${result.output.slice(0, 500)}`,
    );
  const lines = result.output.split('\n');
  return wanted.map((w, i) => {
    const line = lines[i] ?? 'missing';
    const found = line.startsWith('found\t');
    return { ...w, found, ...(found ? { path: line.slice('found\t'.length) } : {}) };
  });
}

/** What a person reads when programs are missing: which, for what, and how to choose an image that has them. */
export function missingProgramsMessage(missing: readonly ProgramCheck[], image: string): string {
  const list = missing.map((m) => `${m.program} (needed by ${m.for})`).join(', ');
  return (
    `not found in the sandbox image ${image}: ${list}. Choose an image that has them with --image or the ` +
    `config's "image" (preset:node has node, npm and npx; preset:python has python3, pip, venv and pytest; any ` +
    `glibc Linux image with bash works), or install them in "setup".`
  );
}
