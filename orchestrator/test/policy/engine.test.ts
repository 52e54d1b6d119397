import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  createPolicy,
  loadShellClassifier,
  PolicyFileError,
  type Mode,
  type PolicyRequest,
} from '../../src/policy/index';

const classifier = await loadShellClassifier();
const policy = (file: unknown, mode: Mode = 'sandboxed-auto') =>
  createPolicy(compilePolicy(file, 'test.json', classifier), mode, classifier);
const bash = (command: string): PolicyRequest => ({
  tool: 'bash',
  input: { command },
  readOnly: false,
  sideEffect: 'execute',
});
const edit = (p: string): PolicyRequest => ({
  tool: 'edit_file',
  input: { path: p, oldText: 'a', newText: 'b' },
  readOnly: false,
  sideEffect: 'write',
});
const read = (p: string): PolicyRequest => ({
  tool: 'read_file',
  input: { path: p },
  readOnly: true,
  sideEffect: 'read',
});

describe('policy file', () => {
  it('a bad file is one clear error naming the entry', () => {
    const bad = (file: unknown) => () => policy(file);
    expect(bad({ allow: ['bash(npm test*'] })).toThrow(/allow\[0\].*is not a rule/);
    expect(bad({ deny: [{ rule: 'bash(git push*)', match: ['git pull'] }] })).toThrow(
      /deny\[0\]\.match\[0\]: "bash\(git push\*\)": example "git pull" is expected to match, but it does not/,
    );
    expect(bad({ allow: [{ rule: 'bash(npm test*)', notMatch: ['npm test --watch'] }] })).toThrow(
      /expected not to match, but it matches/,
    );
    expect(bad({ ask: ['read_artifact(x)'] })).toThrow(/ask\[0\].*read_artifact takes no pattern/);
    expect(bad({ mode: 'yolo' })).toThrow(PolicyFileError);
    expect(bad({ mode: 'yolo' })).toThrow(/test\.json: mode: /);
    expect(bad({ allow: 'bash' })).toThrow(/test\.json: allow: /);
    expect(bad({ allow: [], extra: 1 })).toThrow(/extra/);
    expect(bad({ approvers: [{ name: 'a', publicKey: 'not-a-key' }] })).toThrow(/approvers\[0\]\.publicKey/);
  });

  it(
    'inline examples are checked the way decisions are made ' + '(any command for deny/ask, every command for allow)',
    () => {
      expect(() =>
        policy({
          deny: [
            {
              rule: 'bash(git push*)',
              match: ['npm test && git push', 'bash -c "git push"', '/usr/bin/git -C . push'],
            },
          ],
        }),
      ).not.toThrow();
      expect(() => policy({ allow: [{ rule: 'bash(npm test*)', notMatch: ['npm test && curl x'] }] })).not.toThrow();
      expect(() =>
        policy({
          allow: [
            {
              rule: 'edit_file(src/**)',
              match: ['./src/../src/a.ts', '/workspace/src/x/y.ts'],
              notMatch: ['src2/a.ts', '../src/a.ts'],
            },
          ],
        }),
      ).not.toThrow();
    },
  );
});

describe('decisions', () => {
  it('strictest wins: deny over ask over allow, whatever the order in the file', () => {
    const p = policy({ allow: ['bash(git*)'], ask: ['bash(git commit*)'], deny: ['bash(git push*)'] });
    expect(p.decide(bash('git status')).decision).toBe('allow');
    expect(p.decide(bash('git commit -m x')).decision).toBe('ask');
    expect(p.decide(bash('git push origin main'))).toMatchObject({
      decision: 'deny',
      policyId: 'deny[0] bash(git push*)',
    });
  });

  it('rule order never changes a decision (property: shuffled lists, same decisions)', () => {
    const rules = {
      allow: ['bash(npm*)', 'bash(git status*)', 'edit_file(src/**)', 'read_file'],
      ask: ['bash(npm publish*)', 'edit_file(src/secret/**)'],
      deny: ['bash(rm -rf*)', 'edit_file(**/.env)', 'bash(curl*)'],
    };
    const calls = [
      bash('npm test'),
      bash('npm publish'),
      bash('rm -rf build && npm test'),
      bash('curl x | sh'),
      bash('git status; ls'),
      edit('src/a.ts'),
      edit('src/secret/k.ts'),
      edit('src/.env'),
      read('x'),
    ];
    const base = policy(rules);
    const expected = calls.map((c) => base.decide(c).decision);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(rules.allow, { minLength: 4 }),
        fc.shuffledSubarray(rules.ask, { minLength: 2 }),
        fc.shuffledSubarray(rules.deny, { minLength: 3 }),
        (allow, ask, deny) => {
          const p = policy({ allow, ask, deny });
          expect(calls.map((c) => p.decide(c).decision)).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('path rules match the normalised workspace path: no spelling dodges them', () => {
    const p = policy({ deny: ['edit_file(test/**)', 'read_file(.env)'] });
    for (const spelling of [
      'test/a.js',
      './test/a.js',
      'src/../test/a.js',
      '/workspace/test/a.js',
      'test//a.js',
      './src/./../test/a.js',
    ]) {
      expect(p.decide(edit(spelling)).decision, spelling).toBe('deny');
    }
    for (const spelling of ['.env', './.env', '/workspace/.env', 'a/../.env'])
      expect(p.decide(read(spelling)).decision, spelling).toBe('deny');
    expect(p.decide(read('a/.env')).decision).toBe('allow');
  });

  it('a redirection is a write: write_file and edit_file rules apply to its target', () => {
    const p = policy({ deny: ['edit_file(test/**)'], ask: ['write_file(config/**)'] }, 'sandboxed-auto');
    expect(p.decide(bash('echo hi > test/math.test.js'))).toMatchObject({
      decision: 'deny',
      policyId: 'deny[0] edit_file(test/**)',
    });
    expect(p.decide(bash('echo hi >> ./src/../test/x.js')).decision).toBe('deny');
    expect(p.decide(bash('echo {} > config/app.json')).decision).toBe('ask');
    expect(p.decide(bash('echo hi > notes.txt')).decision).toBe('allow');
  });

  it('bash rules apply to every simple command, never to the raw string', () => {
    const p = policy({ allow: ['bash(npm test*)'], deny: ['bash(git push*)', 'bash(rm -rf /*)'] }, 'confirm-each');
    expect(p.decide(bash('npm test')).decision).toBe('allow');
    expect(p.decide(bash('npm test -- --watch=false')).decision).toBe('allow');
    // An allow rule covers a line only if it covers every part of it.
    expect(p.decide(bash('npm test && curl http://x | sh')).decision).toBe('ask');
    expect(p.decide(bash('npm test; rm -rf node_modules')).decision).toBe('ask');
    expect(p.decide(bash('npm test > /tmp/out')).decision).toBe('ask');
    for (const hidden of [
      'npm test; git push',
      'echo $(git push)',
      'bash -c "git push"',
      'env A=1 git push',
      'xargs git push < refs',
      'timeout 5 git push',
      'nice git push',
      '/usr/bin/git push',
      '\\git push',
      'git -C . push',
      '(git push)',
      'find . -exec git push \\;',
      'sudo rm -rf /',
    ]) {
      expect(p.decide(bash(hidden)).decision, hidden).toBe('deny');
    }
  });

  it('what the classifier cannot follow is asked, never allowed — even under an allow rule; deny still wins', () => {
    const p = policy({ allow: ['bash(*)'], deny: ['bash(git push*)'] });
    expect(p.decide(bash('eval "$CMD"'))).toMatchObject({ decision: 'ask', policyId: 'classifier:unfollowable' });
    expect(p.decide(bash('$TOOL --version')).decision).toBe('ask');
    expect(p.decide(bash('git push; eval "$X"')).decision).toBe('deny');
  });

  it(
    'modes: read-only denies writes and commands; confirm-each asks; sandboxed-auto asks only for network, ' +
      'privilege, unknown',
    () => {
      const ro = policy({}, 'read-only');
      expect(ro.decide(read('a')).decision).toBe('allow');
      expect(ro.decide(edit('a')).decision).toBe('deny');
      expect(ro.decide(bash('ls')).decision).toBe('deny');
      const each = policy({}, 'confirm-each');
      expect(each.decide(read('a')).decision).toBe('allow');
      expect(each.decide(edit('a')).decision).toBe('ask');
      expect(each.decide(bash('npm test')).decision).toBe('ask');
      const auto = policy({}, 'sandboxed-auto');
      expect(auto.decide(edit('a')).decision).toBe('allow');
      expect(auto.decide(bash('npm test && rm -rf dist')).decision).toBe('allow');
      expect(auto.decide(bash('curl -s http://127.0.0.1:9')).decision).toBe('ask');
      expect(auto.decide(bash('sudo ls')).decision).toBe('ask');
      expect(auto.decide(bash('some-unknown-tool --flag')).decision).toBe('ask');
      // Deny rules hold in every mode.
      for (const mode of ['read-only', 'confirm-each', 'confirm-novel', 'sandboxed-auto'] as const) {
        expect(policy({ deny: ['read_file(secrets/**)'] }, mode).decide(read('secrets/k')).decision, mode).toBe('deny');
      }
    },
  );

  it(
    'confirm-novel asks the first time a shape is seen; ' + 'an approved shape is not asked again; network always asks',
    () => {
      const p = policy({}, 'confirm-novel');
      const first = p.decide(bash('npm test -- a.test.js'));
      expect(first).toMatchObject({ decision: 'ask', shape: 'bash:npm test' });
      const known = { approvedShapes: new Set([first.shape]) };
      expect(p.decide(bash('npm test -- b.test.js'), known)).toMatchObject({
        decision: 'allow',
        policyId: 'mode:confirm-novel(known shape)',
      });
      expect(p.decide(bash('npm run build'), known).decision).toBe('ask');
      expect(p.decide(bash('ls -la'), known).decision).toBe('allow');
      const e = p.decide(edit('src/a.ts'));
      expect(e).toMatchObject({ decision: 'ask', shape: 'edit_file:src/' });
      expect(p.decide(edit('src/b.ts'), { approvedShapes: new Set([e.shape]) }).decision).toBe('allow');
      expect(p.decide(edit('lib/b.ts'), { approvedShapes: new Set([e.shape]) }).decision).toBe('ask');
      expect(p.decide(bash('curl x'), { approvedShapes: new Set(['bash:curl']) }).decision).toBe('ask');
      // Destructive commands ask every time; a redirection's shape keeps its directory.
      expect(p.decide(bash('rm -rf build'), { approvedShapes: new Set(['bash:rm']) }).decision).toBe('ask');
      const note = p.decide(bash('echo x > notes/a.md'));
      expect(note.shape).toBe('bash:> notes/');
      expect(p.decide(bash('echo x > .git/hooks/pre-commit'), { approvedShapes: new Set([note.shape]) }).decision).toBe(
        'ask',
      );
      expect(p.decide(bash('echo y > notes/b.md'), { approvedShapes: new Set([note.shape]) }).decision).toBe('allow');
    },
  );
});

type CorpusEntry = { command: string; decision: 'allow' | 'ask' | 'deny' };
const corpusDir = fileURLToPath(new URL('./corpus/', import.meta.url));
const corpus = JSON.parse(readFileSync(`${corpusDir}shell-commands.json`, 'utf8')) as CorpusEntry[];
const corpusPolicy = JSON.parse(readFileSync(`${corpusDir}policy.json`, 'utf8')) as { mode: Mode };

describe(`the shell corpus against the policy (${corpus.length} commands)`, () => {
  const p = policy(corpusPolicy, corpusPolicy.mode);
  it.each(corpus.map((c) => [c.command.length > 60 ? `${c.command.slice(0, 60)}…` : c.command, c] as const))(
    '%s',
    (_name, c) => {
      expect(p.decide(bash(c.command)).decision).toBe(c.decision);
    },
  );
});

describe('writes under .git always ask (issue 10)', () => {
  const write = (p: string): PolicyRequest => ({
    tool: 'write_file',
    input: { path: p, content: 'x' },
    readOnly: false,
    sideEffect: 'write',
  });

  it('write_file and edit_file under any .git, in any spelling, ask even where writes are allowed', () => {
    const p = policy({ allow: ['write_file', 'edit_file(**)'] });
    for (const path of [
      '.git/config',
      './.git/config',
      'src/../.git/config',
      '/workspace/.git/hooks/pre-commit',
      'vendor/lib/.git/config',
      '.git',
    ]) {
      expect(p.decide(write(path)), path).toMatchObject({ decision: 'ask', policyId: 'gatehouse:git-dir' });
      expect(p.decide(edit(path)).decision, path).toBe('ask');
    }
    expect(p.decide(write('.gitignore')).decision).toBe('allow');
    expect(p.decide(write('src/.github/x')).decision).toBe('allow');
    expect(p.decide(read('.git/config')).decision).toBe('allow');
  });

  it('deny rules still decide first, and read-only mode still denies', () => {
    expect(policy({ deny: ['write_file(.git/**)'] }).decide(write('.git/config')).decision).toBe('deny');
    expect(policy({}, 'read-only').decide(write('.git/config')).decision).toBe('deny');
  });

  it.each([
    'cat x > .git/config',
    'uniq x .git/config',
    'sort -o ./.git/config x',
    'shuf --output=.git/hooks/pre-commit -e x',
    'cp x .git/config',
    'cd .git && cp ../x config',
    'sed -i s/a/b/ .git/config',
    'tee .git/info/attributes < x',
  ])('%s asks in sandboxed-auto', (command) => {
    expect(policy({}).decide(bash(command))).toMatchObject({ decision: 'ask', policyId: 'gatehouse:git-dir' });
  });

  it('reading .git stays allowed', () => {
    for (const command of ['cat .git/config', 'ls .git', 'git --git-dir=.git log'])
      expect(policy({}).decide(bash(command)).decision, command).toBe('allow');
  });
});
