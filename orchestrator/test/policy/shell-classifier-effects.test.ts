import { describe, expect, it } from 'vitest';
import { shell, useShellClassifier, texts } from './shell-classifier-harness';

useShellClassifier();

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
