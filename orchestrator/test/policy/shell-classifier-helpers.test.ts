import { describe, expect, it } from 'vitest';
import { sedEffects } from '../../src/policy/shell/arguments';
import { ansiC, expandBraces, type Word } from '../../src/policy/shell/words';

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
