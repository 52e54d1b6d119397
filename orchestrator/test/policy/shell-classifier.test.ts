import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  COMMAND_CLASSES,
  loadShellClassifier,
  MAX_SOURCE_LENGTH,
  type CommandClass,
  type ShellAnalysis,
  type ShellClassifier,
} from '../../src/policy/shell/index';
import { sedEffects } from '../../src/policy/shell/arguments';
import { ansiC, expandBraces, type Word } from '../../src/policy/shell/words';

interface CorpusEntry {
  command: string;
  class: CommandClass;
  followable: boolean;
  texts?: string[];
  decision: 'allow' | 'ask' | 'deny';
  note?: string;
}

interface PolicyFile {
  mode: string;
  allow: string[];
  ask: string[];
  deny: string[];
}

const corpusDir = new URL('./corpus/', import.meta.url);
const corpus = JSON.parse(readFileSync(new URL('shell-commands.json', corpusDir), 'utf8')) as CorpusEntry[];
const policy = JSON.parse(readFileSync(new URL('policy.json', corpusDir), 'utf8')) as PolicyFile;

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});

const texts = (a: ShellAnalysis) => a.commands.map((c) => c.text);
const one = (command: string) => {
  const a = shell.classify(command);
  expect(a.commands, command).toHaveLength(1);
  return a.commands[0]!;
};
const label = (e: CorpusEntry) => JSON.stringify(e.command.length > 70 ? `${e.command.slice(0, 67)}...` : e.command);

describe('the corpus', () => {
  it('is big and broad enough to mean something', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(320);
    expect(corpus.filter((e) => e.note?.startsWith('bypass')).length).toBeGreaterThanOrEqual(40);
    for (const cls of COMMAND_CLASSES)
      expect(
        corpus.some((e) => e.class === cls),
        cls,
      ).toBe(true);
    for (const d of ['allow', 'ask', 'deny'])
      expect(
        corpus.some((e) => e.decision === d),
        d,
      ).toBe(true);
    expect(new Set(corpus.map((e) => e.command)).size).toBe(corpus.length);
  });

  it.each(corpus.map((e) => [label(e), e] as const))('%s', (_, e) => {
    const a = shell.classify(e.command);
    expect(
      { class: a.class, followable: a.followable },
      JSON.stringify({ problems: a.problems, commands: texts(a) }),
    ).toEqual({ class: e.class, followable: e.followable });
    if (e.texts) expect(texts(a)).toEqual(e.texts);
    // Invariants every analysis keeps, whatever the command.
    expect(a.followable).toBe(a.problems.length === 0);
    for (const c of a.commands) expect(c.text).toBe(c.argv.join(' '));
  });
});

/**
 * REFERENCE IMPLEMENTATION OF THE DECISION RULES, FOR THIS TEST ONLY. The policy engine (written
 * separately) is what the product uses; this copy exists so the corpus's `decision` column is
 * checked against the classifier's output and cannot drift from the rules it documents:
 *  1. any command text matching a deny rule → deny;
 *  2. else a line that is not followable, or that writes under a .git directory (a redirection or
 *     output target there, or a .git path word in a line that is not read-only) → ask;
 *  3. else any command text matching an ask rule → ask;
 *  4. else each command is allowed by an allow rule or by the sandboxed-auto default for its class
 *     (read-only, test-build, write, destructive; redirect writes are write): allow only if all are.
 */
function referenceDecision(a: ShellAnalysis, p: PolicyFile): 'allow' | 'ask' | 'deny' {
  const rule = (r: string) => {
    const glob = /^bash\((.*)\)$/s.exec(r)![1]!;
    return new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 's');
  };
  const [allow, ask, deny] = [p.allow.map(rule), p.ask.map(rule), p.deny.map(rule)];
  const matches = (rules: RegExp[]) => a.commands.some((c) => rules.some((r) => r.test(c.text)));
  if (matches(deny)) return 'deny';
  if (!a.followable) return 'ask';
  const gitDir = (w: string) => /(^|[/=])\.git(\/|$)/.test(w.replace(/^(\.\/)+/, ''));
  if (a.writes.some(gitDir) || (a.class !== 'read-only' && a.commands.some((c) => c.argv.some(gitDir)))) return 'ask';
  if (matches(ask)) return 'ask';
  const byDefault = new Set<CommandClass>(['read-only', 'test-build', 'write', 'destructive']);
  return a.commands.every((c) => allow.some((r) => r.test(c.text)) || byDefault.has(c.class)) ? 'allow' : 'ask';
}

describe('the corpus decision column (checked with the reference rules above)', () => {
  it('uses the policy given in corpus/policy.json', () => {
    expect(policy).toEqual({
      mode: 'sandboxed-auto',
      allow: ['bash(npm test*)', 'bash(npm run build*)', 'bash(git status*)'],
      ask: ['bash(git commit*)'],
      deny: ['bash(git push*)', 'bash(curl*)', 'bash(rm -rf /*)'],
    });
  });

  it('agrees with the reference rules for every entry', () => {
    const wrong = corpus
      .filter((e) => referenceDecision(shell.classify(e.command), policy) !== e.decision)
      .map((e) => e.command);
    expect(wrong).toEqual([]);
  });
});

describe('wrappers are unwrapped and recorded in via', () => {
  it.each([
    ['bash -c "git push"', ['bash -c']],
    ["sh -c 'git push'", ['sh -c']],
    ["dash -c 'git push'", ['dash -c']],
    ["zsh -c 'git push'", ['zsh -c']],
    ["bash -euxc 'git push'", ['bash -c']],
    ["bash -o pipefail -c 'git push'", ['bash -c']],
    ['bash <<EOF\ngit push\nEOF', ['bash <<EOF']],
    ["bash <<'EOF'\ngit push\nEOF", ['bash <<EOF']],
    ['bash <<< "git push"', ['bash <<<']],
    ['env git push', ['env']],
    ['env -C /tmp A=1 B=2 git push', ['env']],
    ['env -- git push', ['env']],
    ['xargs -0 -n 1 -P4 -I {} git push', ['xargs']],
    ['nice git push', ['nice']],
    ['nice -n 10 git push', ['nice']],
    ['nice -10 git push', ['nice']],
    ['timeout 5 git push', ['timeout']],
    ['timeout -k 2 -s TERM 5m git push', ['timeout']],
    ['timeout --preserve-status 5 git push', ['timeout']],
    ['nohup git push', ['nohup']],
    ['time git push', ['time']],
    ['time -p git push', ['time']],
    ['command git push', ['command']],
    ['exec git push', ['exec']],
    ['exec -a name git push', ['exec']],
    ['stdbuf -oL -e0 git push', ['stdbuf']],
    ['stdbuf --output=L git push', ['stdbuf']],
    ['nohup timeout 5 bash -c "env A=1 git push"', ['nohup', 'timeout', 'bash -c', 'env']],
  ])('%s', (command, via) => {
    const a = shell.classify(command);
    expect(a.followable).toBe(true);
    expect(a.commands.map((c) => [c.text, c.via])).toEqual([['git push', via]]);
  });

  it('find -exec/-execdir/-ok run their command (up to ; or +), find itself is listed too', () => {
    expect(texts(shell.classify(String.raw`find . -name '*.ts' -exec grep -l x {} \; -print`))).toEqual([
      'find . -name *.ts -exec grep -l x {} ; -print',
      'grep -l x {}',
    ]);
    expect(texts(shell.classify(String.raw`find . -exec rm {} + -o -execdir git push \;`))).toEqual([
      'find . -exec rm {} + -o -execdir git push ;',
      'rm {}',
      'git push',
    ]);
    expect(shell.classify("find . -ok rm {} ';'").commands[1]!.via).toEqual(['find -ok']);
    expect(shell.classify('find . -name x').class).toBe('read-only');
    expect(shell.classify('find . -name x -delete').class).toBe('destructive');
  });

  it('xargs appends its input (or substitutes it), which is only known at run time', () => {
    expect(texts(shell.classify('xargs -n1 git push'))).toEqual(['git push ...']);
    expect(shell.classify('xargs -r git push').commands[0]!.via).toEqual(['xargs']);
    for (const command of [
      'echo push | xargs git',
      'xargs -I % git %',
      'xargs -i git {}',
      "xargs -I{} sh -c 'echo {}'",
    ]) {
      expect(shell.classify(command).followable, command).toBe(false);
    }
    expect(shell.classify('xargs -0 rm').class).toBe('destructive');
  });

  it('find -exec substitutes file names for {}: a command or script built from them is not followable', () => {
    expect(shell.classify(String.raw`find . -exec rm {} \;`).followable).toBe(true);
    expect(shell.classify(String.raw`find . -exec git {} \;`).followable).toBe(false);
    expect(shell.classify(String.raw`find . -exec sh -c 'cat {}' \;`).followable).toBe(false);
  });

  it('sudo and doas are privilege themselves and their command is classified too', () => {
    const a = shell.classify('sudo -u root -E A=1 rm -rf /tmp/x');
    expect(a.commands.map((c) => [c.text, c.class, c.via])).toEqual([
      ['sudo -u root -E A=1 rm -rf /tmp/x', 'privilege', []],
      ['rm -rf /tmp/x', 'destructive', ['sudo']],
    ]);
    expect(shell.classify('doas -u web git status').commands.map((c) => c.class)).toEqual(['privilege', 'read-only']);
    expect(shell.classify('sudo -l').commands.map((c) => c.text)).toEqual(['sudo -l']);
  });

  it('a shell running a script file is unknown, but followable', () => {
    const a = shell.classify('bash -x scripts/deploy.sh --prod');
    expect([a.class, a.followable, texts(a)]).toEqual(['unknown', true, ['bash -x scripts/deploy.sh --prod']]);
  });

  it(
    'a shell string or here-document only known at run time is not followable, and the visible text is ' +
      'still checked',
    () => {
      for (const command of [
        'bash -c "$SCRIPT"',
        'sh -c "$(cat x)"',
        'bash <<EOF\n$CMD\nEOF',
        'eval git push',
        'eval "$X"',
      ]) {
        const a = shell.classify(command);
        expect([a.class, a.followable], command).toEqual(['unknown', false]);
        expect(a.problems.length, command).toBeGreaterThan(0);
      }
      expect(texts(shell.classify('bash -c "git push $REMOTE"'))).toContain('git push $REMOTE');
    },
  );

  it('stacks of nested shells are followed, up to a bound', () => {
    let s = 'git push';
    for (let i = 0; i < 3; i++) s = `bash -c ${JSON.stringify(s)}`;
    expect(shell.classify(s).commands.map((c) => c.via.length)).toEqual([3]);
    for (let i = 0; i < 10; i++) s = `bash -c ${JSON.stringify(s)}`;
    expect(shell.classify(s).followable).toBe(false);
  });
});

describe('normalisation', () => {
  it.each([
    ['/usr/bin/git push', 'git push'],
    ['/usr/local/bin/git push', 'git push'],
    [String.raw`\git push`, 'git push'],
    ["'git' push", 'git push'],
    ['"git" push', 'git push'],
    ['g\'i\'t p"us"h', 'git push'],
    [String.raw`$'\x67\151t' push`, 'git push'],
    ['git -C . push', 'git push'],
    ['git -C /tmp/repo -c color.ui=always --no-pager push -f', 'git push -f'],
    ['git --git-dir=.git --work-tree . push', 'git push'],
    ['git --namespace x -P log', 'git log'],
    ['npm --prefix x test', 'npm test'],
    ['npm --silent --workspace=orchestrator run build', 'npm run build'],
    ['git >/dev/null push', 'git push'],
    ['git pu\\\nsh', 'git push'],
    ['gi\\\nt push', 'git push'],
    ['>/dev/null git push', 'git push'],
    ['echo a{b,c}', 'echo ab ac'],
    ['echo x{1..3}', 'echo x1 x2 x3'],
  ])('%s → %s', (command, text) => {
    expect(one(command).text).toBe(text);
  });

  it('keeps expansions as written and does not treat them as literal', () => {
    expect(one('cat "$HOME/x" ${Y:-z}').argv).toEqual(['cat', '$HOME/x', '${Y:-z}']);
  });

  it('rejects command names only known at run time', () => {
    for (const command of [
      '$CMD push',
      '"$CMD" push',
      '$(echo rm) -rf x',
      '`which git` push',
      '${G} push',
      '/usr/bin/gi? push',
      'git$X push',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable], command).toEqual(['unknown', false]);
    }
  });

  it('treats source, ., eval and alias as not followable', () => {
    for (const command of ['source env.sh', '. env.sh', 'eval ls', "alias ll='ls -l'"])
      expect(shell.classify(command).followable, command).toBe(false);
  });

  it('does not trust a name that is not the system program', () => {
    for (const command of [
      './git status',
      '~/bin/git status',
      'PATH=. git status',
      'LD_PRELOAD=x.so git status',
      'git -c core.pager=x status',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable], command).toEqual(['unknown', false]);
    }
    expect(shell.classify('./gradlew build').class).toBe('test-build');
  });

  it("runs a package's program as project code, named by its path", () => {
    for (const command of [
      'node_modules/.bin/git status',
      './node_modules/.bin/git status',
      '/tmp/node_modules/.bin/git status',
    ]) {
      const a = shell.classify(command);
      expect([a.class, a.followable, texts(a)], command).toEqual(['test-build', true, [command]]);
    }
    expect(shell.classify('node_modules/.bin/../../bin/git status').followable).toBe(false);
  });

  it('classifies a call to a function by its name, wherever and whenever the function is defined', () => {
    for (const command of [
      'rm() { :; }; rm -rf x',
      'rm -rf x; rm() { :; }',
      "bash -c 'rm() { :; }'; rm -rf x",
      'rm() { :; }; command rm -rf x',
    ]) {
      expect(shell.classify(command).class, command).toBe('destructive');
    }
    expect(shell.classify('f() { ls; }; f').class).toBe('unknown');
  });
});

describe('package runners', () => {
  it('follow a wrapper they launch, and are unknown themselves', () => {
    expect(shell.classify('npx env git push').commands.map((c) => [c.text, c.class, c.via])).toEqual([
      ['npx env git push', 'unknown', []],
      ['git push', 'network', ['npx', 'env']],
    ]);
    for (const command of [
      'npm exec -- timeout 5 git push',
      'npm x nice git push',
      'pnpm exec env git push',
      'pnpm dlx env git push',
      'yarn dlx env git push',
      'bunx nice git push',
      'bun x env git push',
      'npx -c "git push"',
      'pnpm exec -c "git push"',
    ]) {
      const a = shell.classify(command);
      expect([a.class, texts(a).at(-1)], command).toEqual(['unknown', 'git push']);
    }
  });

  it('classify an ordinary tool as that tool, and an unknown one as unknown', () => {
    expect(shell.classify('npx tsc --noEmit').class).toBe('test-build');
    expect(shell.classify('npx some-package').class).toBe('unknown');
  });
});

describe('strings bash evaluates again', () => {
  it('allows arithmetic on numbers and on variables the line only ever sets to integers', () => {
    for (const command of [
      '(( i++ ))',
      'n=0; n=$((n+1)); echo $n',
      'for i in {1..3}; do echo $((i*2)); done',
      'sleep 1 & pid=$!; wait "$pid"',
      'echo $(( $# + ${#x} + $? ))',
      'echo "${a[@]:1:2}"',
    ]) {
      const a = shell.classify(command);
      expect([a.followable, a.problems], command).toEqual([true, []]);
    }
  });

  it('does not follow arithmetic on a value the line sets to text, in any of its scripts', () => {
    for (const command of [
      'read n; echo $((n))',
      'x=$(cat f); echo $((x))',
      "bash -c 'read n'; echo $((n))",
      'f() { echo $(( $1 )); }; f x',
      'x=a; echo ${arr[x]}',
      'mapfile -t n < f; (( n > 1 ))',
      'printf -v n %s x; [[ $n -gt 1 ]]',
      'a=([$x]=1); x=$(cat f)',
    ]) {
      expect(shell.classify(command).followable, command).toBe(false);
    }
  });

  it('parses a literal string bash may evaluate, when the line is asked, so deny rules still see its commands', () => {
    expect(texts(shell.classify("x='a[$(git push)]'; echo $((x))"))).toContain('git push');
    expect(texts(shell.classify("let 'a[$(git push)]++'"))).toContain('git push');
    // Only text while nothing evaluates it: not parsed, not asked.
    const a = shell.classify('x=\'$(git push)\'; echo "$x"');
    expect([a.followable, texts(a)]).toEqual([true, ['echo $x']]);
  });
});

describe('redirections', () => {
  it.each([
    ['echo x > a', ['a']],
    ['echo x >> a', ['a']],
    ['echo x &> a', ['a']],
    ['echo x &>> a', ['a']],
    ['echo x >| a', ['a']],
    ['echo x >&a', ['a']],
    ['echo x 2> a 1>b', ['a', 'b']],
    ['echo x > /dev/null 2>&1', []],
    ['echo x > /dev/stdout; echo y > /dev/stderr', []],
    ['echo x >&2 2>&1 3>&-', []],
    ['cat < a', []],
    ['cat <<< x', []],
    ['echo x > "$F"', ['$F']],
  ])('%s writes %j', (command, writes) => {
    const a = shell.classify(command);
    expect(a.writes).toEqual(writes);
    expect(a.class).toBe(writes.length ? 'write' : 'read-only');
  });

  it('a target spelled at run time is followed only when it cannot turn out to be /dev/tcp or /dev/udp', () => {
    for (const command of [
      'echo x > "$TMPDIR/x"',
      'd=out; echo x > "$d/log"',
      'n=3; echo x > /dev/fd/$n',
      'echo x > "out/$(date +%s).log"',
    ]) {
      expect(shell.classify(command).followable, command).toBe(true);
    }
    for (const command of [
      'x=tcp; echo x > /dev/$x/h/80',
      'read t; echo x > "$t"',
      'echo x > "$(cat target)"',
      'echo x > ~-/x',
      'cat < /dev/${p:-tcp}/h/80',
    ]) {
      expect(shell.classify(command).followable, command).toBe(false);
    }
    expect(shell.classify('echo x > /dev/tcp/$host/80').class).toBe('network');
  });

  it('a redirection to /dev/tcp or /dev/udp is a network connection, not a file', () => {
    for (const command of ['echo x > /dev/tcp/example.com/80', 'cat < /dev/udp/10.0.0.1/53', 'exec 3>/dev/tcp/h/1']) {
      const a = shell.classify(command);
      expect([a.class, a.writes], command).toEqual(['network', []]);
    }
  });

  it('a redirect write does not lower a riskier class', () => {
    expect(shell.classify('rm x > log').class).toBe('destructive');
  });
});

describe('the overall class', () => {
  it('is the riskiest part, in the order of COMMAND_CLASSES', () => {
    expect(shell.classify('ls; npm test').class).toBe('test-build');
    expect(shell.classify('ls; touch x; npm test').class).toBe('write');
    expect(shell.classify('rm x; touch y').class).toBe('destructive');
    expect(shell.classify('rm x; curl y').class).toBe('network');
    expect(shell.classify('curl y; sudo ls').class).toBe('privilege');
    expect(shell.classify('sudo ls; frobnicate').class).toBe('unknown');
  });

  it('is unknown whenever something could not be followed', () => {
    const a = shell.classify('ls; $X');
    expect([a.class, a.followable]).toEqual(['unknown', false]);
  });
});

describe('bounds', () => {
  it('loads once and classifies synchronously', async () => {
    expect(await loadShellClassifier()).toBe(shell);
    expect(shell.classify('ls')).not.toBeInstanceOf(Promise);
  });

  it('answers a 1 MB line at once, without parsing it', () => {
    const t = performance.now();
    const a = shell.classify(`echo ${'a'.repeat(1 << 20)}`);
    expect(performance.now() - t).toBeLessThan(1000);
    expect([a.class, a.followable, a.commands]).toEqual(['unknown', false, []]);
    expect(a.problems[0]).toContain(String(MAX_SOURCE_LENGTH));
  });

  it.each([
    ['a long list of commands', 'echo a; '.repeat(MAX_SOURCE_LENGTH / 8 - 1)],
    ['deeply nested substitutions', `echo ${'$('.repeat(3000)}x${')'.repeat(3000)}`],
    ['deeply nested subshells', `${'('.repeat(20000)}ls${')'.repeat(20000)}`],
    ['a long && chain', `${'true && '.repeat(5000)}ls`],
    ['unbalanced quotes', '"'.repeat(100_000)],
    ['a huge brace expansion', `echo ${'{a,b}'.repeat(40)}`],
    ['many brace expansions', `echo ${'{a,b}{c,d}{e,f}{g,h} '.repeat(2000)}`],
  ])('terminates with a bounded result on %s', (_, command) => {
    const t = performance.now();
    const a = shell.classify(command);
    expect(performance.now() - t).toBeLessThan(5000);
    expect(a.commands.length).toBeLessThanOrEqual(10_000);
    expect(a.followable).toBe(false);
    expect(a.class).toBe('unknown');
    for (const p of a.problems) expect(p.length).toBeLessThan(200);
  });
});

describe('helpers', () => {
  const lit = (value: string, pattern = value): Word => ({ value, literal: true, pattern });

  it('expands braces as bash does, and only unquoted ones', () => {
    expect(expandBraces(lit('a{b,c{d,e}}f'))!.map((w) => w.value)).toEqual(['abf', 'acdf', 'acef']);
    expect(expandBraces(lit('{x,}'))!.map((w) => w.value)).toEqual(['x']);
    expect(expandBraces(lit('{5..1..2}'))!.map((w) => w.value)).toEqual(['5', '3', '1']);
    expect(expandBraces(lit('{08..10}'))!.map((w) => w.value)).toEqual(['08', '09', '10']);
    expect(expandBraces(lit('{c..a}'))!.map((w) => w.value)).toEqual(['c', 'b', 'a']);
    expect(expandBraces(lit('{a}'))!.map((w) => w.value)).toEqual(['{a}']);
    expect(expandBraces(lit('{a,b}', String.raw`\{a\,b\}`))!.map((w) => w.value)).toEqual(['{a,b}']);
    expect(expandBraces(lit('{1..100000}'))).toBeNull();
  });

  it('decodes ANSI-C strings', () => {
    expect(ansiC(String.raw`\x67\151t\u0021\n\'`)).toBe("git!\n'");
  });

  it('finds what a sed script does beyond printing', () => {
    expect(sedEffects('s/a/b/g')).toEqual({ runs: false, writes: false });
    expect(sedEffects('/x/,/y/{s|a|b|;p}')).toEqual({ runs: false, writes: false });
    expect(sedEffects(String.raw`s/a\/e/b/w out`)).toEqual({ runs: false, writes: true });
    expect(sedEffects('s/a/b/e')).toEqual({ runs: true, writes: false });
    expect(sedEffects('$e ls')).toEqual({ runs: true, writes: false });
    expect(sedEffects('1,3w out')).toEqual({ runs: false, writes: true });
    expect(sedEffects('a hello e w')).toEqual({ runs: false, writes: false });
  });
});
