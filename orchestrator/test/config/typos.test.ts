import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors';
import { loadProjectConfig } from '../../src/config/load';
import { closeMatches } from '../../src/problems/close-match';
import { repoWith, trustedFile } from './helpers';

function problemsOf(config: unknown, repoConfig?: unknown): string[] {
  try {
    loadProjectConfig({ repoDir: repoWith(repoConfig), configFile: trustedFile(config) });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  }
  throw new Error('the config was accepted');
}

/** The project config (issue 12) lists every problem at once; its policy is checked as a policy file is. */
describe('typos in a project config', () => {
  it('every typo in one file, the inline policy included, each at its path', () => {
    const problems = problemsOf({
      imgae: 'preset:node',
      limits: { memoryMB: 512 },
      policy: { mode: 'confirm-novle', allow: ['edit', 'bsah(npm test*)'], dney: [] },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'imgae: unknown key; did you mean image?',
        'limits.memoryMB: unknown key; did you mean memoryMb?',
        'policy.mode: expected one of read-only, confirm-each, confirm-novel, sandboxed-auto, ' +
          'got "confirm-novle"; did you mean confirm-novel?',
        'policy.dney: unknown key; did you mean deny?',
        'policy.allow[0]: "edit": no such tool `edit`; did you mean edit_file?',
        'policy.allow[1]: "bsah(npm test*)": no such tool `bsah`; did you mean bash?',
      ]),
    );
    expect(problems).toHaveLength(6);
  });

  it("the repository's own config and the trusted one are both checked, all problems together", () => {
    const problems = problemsOf({ imgae: 'x' }, { policy: { deny: ['edit_fiel(.env)'] } });
    expect(problems).toEqual([
      'imgae: unknown key; did you mean image?',
      'policy.deny[0]: "edit_fiel(.env)": no such tool `edit_fiel`; did you mean edit_file?',
    ]);
  });
});

describe('closeMatches', () => {
  it('finds a name the word is a part of, after those a few edits away', () => {
    expect(closeMatches('edit', ['read_file', 'edit_file', 'bash'])).toEqual(['edit_file']);
    expect(closeMatches('memory', ['memoryMb', 'cpus'])).toEqual(['memoryMb']);
    expect(closeMatches('dry', ['--dry-run', '--json'])).toEqual(['--dry-run']);
    expect(closeMatches('bsah', ['bash', 'glob'])).toEqual(['bash']);
    expect(closeMatches('e', ['edit_file'])).toEqual([]);
  });
});
