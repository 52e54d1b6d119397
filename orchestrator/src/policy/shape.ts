import path from 'node:path';
import { pathSubject, subjectKind } from './rules';
import type { ShellAnalysis } from './shell/types';

/** Tools whose second word is the real command (`git commit`, `npm test`). */
const SUBCOMMAND_TOOLS = new Set([
  'git',
  'npm',
  'npx',
  'yarn',
  'pnpm',
  'cargo',
  'go',
  'docker',
  'kubectl',
  'pip',
  'pip3',
  'make',
  'gh',
  'dotnet',
  'mvn',
  'gradle',
]);

/**
 * An action's shape: what confirm-novel remembers once a person approved it. For a command line,
 * the commands it runs that are not read-only (`bash:git commit,npm test`), plus whether it
 * redirects into files (and where); for a file tool, the tool and the directory (`edit_file:src/`).
 */
export function shapeOf(tool: string, input: unknown, analysis: ShellAnalysis | undefined): string {
  if (analysis) {
    const heads = new Set<string>();
    for (const c of analysis.commands) {
      if (c.class === 'read-only') continue;
      const [cmd = '', sub] = c.argv;
      heads.add(SUBCOMMAND_TOOLS.has(cmd) && sub !== undefined && !sub.startsWith('-') ? `${cmd} ${sub}` : cmd);
    }
    // A redirection's shape keeps the directory it writes into: `> notes.md` is not `> .git/hooks/x`.
    for (const w of analysis.writes) {
      const dir = path.posix.dirname(w);
      heads.add(`> ${dir === '.' ? '' : `${dir}/`}`);
    }
    return `bash:${[...heads].sort().join(',')}`;
  }
  if (subjectKind(tool) === 'path') {
    const dir = path.posix.dirname(pathSubject(input));
    return `${tool}:${dir === '.' ? '' : `${dir}/`}`;
  }
  return tool;
}
