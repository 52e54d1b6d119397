import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { compilePolicy, loadPolicyFile, PolicyFileError } from '../../src/policy/file';
import { loadShellClassifier } from '../../src/policy/shell/index';
import type { ShellClassifier } from '../../src/policy/shell/types';

let classifier: ShellClassifier;
beforeAll(async () => {
  classifier = await loadShellClassifier();
});

/** Every problem of a policy, as `path: message` lines. */
function problemsOf(json: unknown): string[] {
  try {
    compilePolicy(json, 'p.json', classifier);
  } catch (e) {
    if (!(e instanceof PolicyFileError)) throw e;
    return e.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  }
  throw new Error('the policy was accepted');
}

describe('a typo in a policy is named, at its JSON path, with the closest right spelling', () => {
  it.each<[string, unknown, string[]]>([
    ['half a tool name', { allow: ['edit'] }, ['allow[0]: "edit": no such tool `edit`; did you mean edit_file?']],
    [
      'a misspelt tool with a pattern',
      { allow: ['bsah(npm test*)'] },
      ['allow[0]: "bsah(npm test*)": no such tool `bsah`; did you mean bash?'],
    ],
    [
      'a misspelt path tool with a pattern',
      { deny: ['edti_file(.env)'] },
      ['deny[0]: "edti_file(.env)": no such tool `edti_file`; did you mean edit_file?'],
    ],
    [
      'two tools close to it',
      { ask: ['read'] },
      ['ask[0]: "read": no such tool `read`; did you mean read_file or read_artifact?'],
    ],
    ['the other half of a name', { deny: ['diff'] }, ['deny[0]: "diff": no such tool `diff`; did you mean git_diff?']],
    [
      'nothing close: every tool is listed',
      { deny: ['shell(rm -rf*)'] },
      [
        'deny[0]: "shell(rm -rf*)": no such tool `shell`; the tools: read_file, write_file, edit_file, list_files, ' +
          'glob, grep, git_diff, bash, git_status, read_artifact, delegate, remember, submit_plan, complete_task',
      ],
    ],
    [
      'a pattern on a real tool that takes none',
      { ask: ['read_artifact(x)'] },
      [
        'ask[0]: "read_artifact(x)": read_artifact takes no pattern ' +
          '(patterns apply to bash commands and to path tools)',
      ],
    ],
    [
      'a rule object naming an unknown tool',
      { deny: [{ rule: 'curl', reason: 'no network' }] },
      [expect.stringMatching(/^deny\[0\]: "curl": no such tool `curl`; the tools: read_file/)],
    ],
    [
      'not a rule at all',
      { allow: ['bash(npm test*'] },
      [
        'allow[0]: "bash(npm test*" is not a rule: write TOOL or TOOL(PATTERN), e.g. bash(npm test*) or ' +
          'edit_file(src/**)',
      ],
    ],
    ['a misspelt list', { alow: ['bash'] }, ['alow: unknown key; did you mean allow?']],
    ['a list name in capitals', { Deny: ['bash'] }, ['Deny: unknown key; did you mean deny?']],
    [
      'a misspelt key of a rule object',
      { deny: [{ rule: 'bash(git push*)', resaon: 'x' }] },
      ['deny[0].resaon: unknown key; did you mean reason?'],
    ],
    [
      'a misspelt mode',
      { mode: 'confirm-novle' },
      [
        'mode: expected one of read-only, confirm-each, confirm-novel, sandboxed-auto, got "confirm-novle"; did you ' +
          'mean confirm-novel?',
      ],
    ],
    [
      'half a mode',
      { mode: 'auto' },
      [
        'mode: expected one of read-only, confirm-each, confirm-novel, sandboxed-auto, got "auto"; did you mean ' +
          'sandboxed-auto?',
      ],
    ],
    ['a rule that is a number', { deny: [42] }, ['deny[0]: expected a string or an object, got 42']],
    ['a list that is a string', { allow: 'bash' }, ['allow: expected an array, got "bash"']],
    [
      'an example that fails',
      { deny: [{ rule: 'bash(git push*)', match: ['git pull'] }] },
      ['deny[0].match[0]: "bash(git push*)": example "git pull" is expected to match, but it does not'],
    ],
    [
      'examples on a rule without a pattern',
      { deny: [{ rule: 'bash', notMatch: ['ls'] }] },
      ['deny[0].notMatch: "bash": examples need a pattern to test (this rule covers every call of bash)'],
    ],
  ])('%s', (_name, json, expected) => {
    expect(problemsOf(json)).toEqual(expected);
  });

  it('lists every problem of a file at once, a bad mode hiding no bad rule', () => {
    const problems = problemsOf({
      mode: 'yolo',
      allow: ['edit', 'bash(npm test*)', 'bsah(npm test*)'],
      ask: ['read_artifact(x)'],
      deny: [{ rule: 'bash(git push*)', match: ['git pull', 'git push origin'] }],
      extra: true,
    });
    expect(problems).toHaveLength(6);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^mode: expected one of /),
        'extra: unknown key; known: $schema, mode, allow, ask, deny, approvers',
        expect.stringMatching(/^allow\[0\]: "edit": no such tool `edit`/),
        expect.stringMatching(/^allow\[2\]: "bsah\(npm test\*\)": no such tool `bsah`/),
        expect.stringMatching(/^ask\[0\]: "read_artifact\(x\)": read_artifact takes no pattern/),
        expect.stringMatching(/^deny\[0\]\.match\[0\]: .*"git pull" is expected to match/),
      ]),
    );
  });

  it('the error says how many problems, each under the file, and what to do; it is a usage error (exit 2)', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-policy-typos-')), 'policy.json');
    writeFileSync(file, '{\n  "allow": ["edit"],\n  "deny": ["bsah(rm*)"]\n}\n');
    let error: unknown;
    try {
      loadPolicyFile(file, classifier);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyFileError);
    expect((error as Error).message).toBe(
      `policy ${file} is not valid (2 problems):\n` +
        `  ${file}: deny[0]: "bsah(rm*)": no such tool \`bsah\`; did you mean bash?\n` +
        `  ${file}: allow[0]: "edit": no such tool \`edit\`; did you mean edit_file?\n` +
        'Fix them (docs/policy.md: the rule forms and the name of every tool).',
    );
    expect(exitCodeOfError(error)).toBe(2);
  });

  it('a key given twice and a syntax error are placed by line and column', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-policy-typos-'));
    const twice = path.join(dir, 'twice.json');
    writeFileSync(twice, '{\n  "allow": ["bash"],\n  "allow": ["read_file"]\n}\n');
    expect(() => loadPolicyFile(twice, classifier)).toThrow(`${twice}:3:3: allow: this key is given twice`);
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{\n  "allow": ["bash",]\n}\n');
    expect(() => loadPolicyFile(broken, classifier)).toThrow(new RegExp(`${broken}:2:\\d+: not valid JSON`));
  });

  it('a recorded policy compiles as it was accepted: a rule naming a tool since dropped matches nothing', () => {
    const json = { deny: ['teleport'] };
    expect(() => compilePolicy(json, 'recorded', classifier)).toThrow(/no such tool `teleport`/);
    const loaded = compilePolicy(json, 'recorded', classifier, { recorded: true });
    expect(loaded.rules.map((r) => r.tool)).toEqual(['teleport']);
  });
});
