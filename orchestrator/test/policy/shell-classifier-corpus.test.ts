import { describe, expect, it } from 'vitest';
import { COMMAND_CLASSES, type CommandClass, type ShellAnalysis } from '../../src/policy/shell/index';
import { type PolicyFile, corpus, policy, shell, useShellClassifier, texts, label } from './shell-classifier-harness';

useShellClassifier();

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
