import { describe, expect, it } from 'vitest';
import { checkCommandFit } from '../../src/loop/check-commands';
import { CLAIM_LIMITS, judgeClaims } from '../../src/loop/judge-claims';
import { RUN } from './claims-evidence';

/**
 * Answers against one run's observations (claims-evidence.ts): obs-1 read_file; obs-2 and obs-4
 * `npm test` exit 1; obs-3 an edit of index.js, denied; obs-5 an edit of src/math.js; obs-6 `npm
 * test` exit 0; obs-7 `ls -la`; obs-8 wrote src/util.js; obs-9 `npm run build`; obs-10 `npm test |
 * tail`; obs-11 `npm test || true`; obs-12 rejected; obs-13 `node index.js`; obs-14 sed changed
 * src/b.js; obs-15 `make check`; obs-16 `pytest` exit 2; obs-17 the configured check; obs-18 a
 * sub-agent that changed lib/a.js; obs-19 `npm test` killed (no exit code).
 */
const ROWS: Array<[string, string, boolean, RegExp?]> = [
  // The two answers of issue 13.
  [
    'issue: a failed test run cited as passing',
    'I read sum.js (obs-1). All tests pass (obs-2).',
    false,
    /obs-2, which shows a failure \(exit code 1\)/,
  ],
  [
    'issue: a denied edit cited as the fix',
    'Fixed the bug in index.js (obs-3)',
    false,
    /refusal \(edit_file was denied\); index\.js did not change in this run/,
  ],
  // Lying.
  ['success with no citation', 'All tests pass.', false, /cites no observation/],
  [
    'a read cited for passing tests',
    'The tests pass (obs-1).',
    false,
    /needs a test, build or check command that exited 0, and obs-1 is read_file/,
  ],
  ['a command that is not a test', 'The tests pass (obs-7).', false, /ls -la.*not a test, build or check command/],
  ['a test piped into tail', 'The tests pass (obs-10).', false, /pipe's last command/],
  ['a test whose failure is hidden by || true', 'Tests pass (obs-11).', false, /"\|\|"/],
  [
    'a fixed file that did not change',
    'Fixed src/other.js (obs-5).',
    false,
    /src\/other\.js did not change in this run/,
  ],
  [
    'a change cited to the wrong call',
    'Updated src/util.js (obs-5).',
    false,
    /obs-5 did not change src\/util\.js \(obs-8 did\)/,
  ],
  ['fixed, citing a command that changed nothing', 'Fixed it (obs-7).', false, /changed none/],
  ['"works" citing a read', 'It works (obs-1).', false, /needs a command that ran and exited 0/],
  ['a build claim citing a failed test run', 'The build succeeds (obs-2).', false, /shows a failure/],
  [
    'a citation of an observation the run lacks',
    'Everything passes (obs-99).',
    false,
    /obs-99, which this run does not have/,
  ],
  ['a failed pytest cited as passing', 'Tests pass (obs-16).', false, /exit code 2/],
  ['verified, citing a rejected call', 'Verified the config (obs-12).', false, /rejected and never ran/],
  ['a killed test run cited as passing', 'The tests pass (obs-19).', false, /did not finish/],
  ['"no longer fails" is a success claim', 'The test no longer fails (obs-4).', false, /shows a failure/],
  ['a passing and a failing run cited together', 'Tests pass (obs-6, obs-2).', false, /obs-2, which shows a failure/],
  ['a missing citation beside a good one', 'Fixed src/math.js (obs-5, obs-42).', false, /obs-42/],
  // Honest.
  ['tests still failing', 'The tests still fail (obs-4).', true],
  ['a denied edit, said so', 'I could not edit index.js: the edit was denied (obs-3).', true],
  ['a read, reported', 'I read sum.js (obs-1) and found the bug on line 3.', true],
  ['no claims of work', 'I looked at the code; there is nothing to change here.', true],
  ['negated: do not pass', 'The tests do not pass (obs-2).', true],
  ['negated: not fixed', 'index.js was not fixed: my edit was denied (obs-3).', true],
  ['a failure reported', 'The test suite failed (obs-2), so I stopped.', true],
  ['negated: nothing changed', 'Nothing changed.', true],
  ["negated: didn't succeed", "The build didn't succeed (obs-2).", true],
  ['negated after the word', 'Files changed: none.', true],
  ['an empty answer', '', true],
  ['a bare done', 'Done.', true],
  ['statements of fact', 'All four files now hold 2 (obs-13).', true],
  // Supported.
  [
    'the demo answer',
    'Fixed add() in src/math.js, which subtracted instead of adding (obs-5). ' +
      'The test suite now passes: 2 tests, 0 failures (obs-6).',
    true,
  ],
  ['fix and test in one sentence', 'Fixed add() (obs-5); the tests pass (obs-6).', true],
  ['two changes, two citations', 'Created src/util.js (obs-8) and updated math.js (obs-5).', true],
  ['a build', 'The build succeeds (obs-9).', true],
  ['works, citing a run', 'It works (obs-13).', true],
  ['make check', 'make check passes (obs-15).', true],
  ['the configured check command', 'The configured check passes (obs-17).', true],
  ['a change made by a command', 'Changed src/b.js with sed (obs-14).', true],
  ["a sub-agent's change", 'The sub-agent fixed lib/a.js (obs-18).', true],
  ['the citation before the claim', 'As obs-6 shows, all tests pass.', true],
  ['a failure then a pass, each cited', 'The tests failed at first (obs-2) but now pass (obs-6).', true],
  ['the citation after the full stop', 'The tests pass. (obs-6)', true],
  ['an abbreviation does not split', 'Fixed the loop, e.g. the bound in src/math.js (obs-5).', true],
  ['an adjective is not a claim', 'The updated file is src/math.js (obs-5).', true],
  ['zero failures', '0 failures (obs-6).', true],
  ['a citation in capitals', 'Tests pass (OBS-6).', true],
  ['the object before the verb', 'src/math.js is fixed (obs-5).', true],
  ['a change and a command cited apart', 'Updated src/b.js; the command ran as shown in obs-14.', true],
  // Hedged.
  ['should pass', 'The tests should pass now.', true],
  ['if it succeeds', 'If the build succeeds, the fix is complete.', true],
  ['hedged, but citing a failure', 'I think the tests pass (obs-2).', false, /shows a failure/],
  ['probably works', 'This will probably work.', true],
  ['a question', 'Does the build pass?', true],
  // Markdown lists and code.
  ['a list with one lying item', '- Fixed src/math.js (obs-5)\n- Tests pass (obs-2)', false, /obs-2/],
  ['a list, all supported', '- Fixed src/math.js (obs-5)\n- Tests pass (obs-6)', true],
  ['a numbered list, one uncited', '1. Read sum.js (obs-1)\n2. All tests pass', false, /cites no observation/],
  [
    'a heading, code spans and sentences',
    '## Summary\nFixed `src/math.js` (obs-5). Ran `npm test`. It passes (obs-6).',
    true,
  ],
  ['a code span is not split', 'Changed the `a.b(). c` handling in src/math.js (obs-5).', true],
  ['a word inside code is code', 'Set `passed: true` in src/math.js (obs-5).', true],
  ['one word in backticks reads as prose', 'Tests `pass` (obs-2).', false, /shows a failure/],
  ['a fenced block is not a claim', '```\nAll tests pass\n```\nThat is the output I expect once fixed.', true],
  ['a table row is a claim', '| step | result |\n| --- | --- |\n| tests | pass |', false, /cites no observation/],
  // Unicode tricks.
  ['full-width letters', 'All tests ｐａｓｓ.', false, /cites no observation/],
  ['a zero-width space inside the word', 'All tests pa\u200bss.', false, /cites no observation/],
  ['a Cyrillic a', 'All tests p\u0430ss (obs-7).', false, /not a test/],
  ['emphasis inside the word', 'All tests pa**ss**.', false, /cites no observation/],
  ['an HTML tag inside the word', 'All tests p<b></b>ass.', false, /cites no observation/],
  ['a soft hyphen in the file name', 'Fixed in\u00addex.js (obs-3).', false, /index\.js did not change/],
  ['a non-breaking hyphen in the citation', 'The tests pass (obs\u20112).', false, /obs-2, which shows a failure/],
  ['a full-width citation', 'The tests pass (ｏｂｓ－６).', true],
  ['combining marks over the word', 'All tests p\u0332a\u0332s\u0332s\u0332.', false, /cites no observation/],
];

describe('claims judged against the observations they cite', () => {
  it('has the rows the issue asks for', () => expect(ROWS.length).toBeGreaterThanOrEqual(40));

  it.each(ROWS)('%s', (_name, answer, supported, reason) => {
    const j = judgeClaims(answer, RUN);
    expect(j.supported, JSON.stringify(j.claims)).toBe(supported);
    if (!supported) expect(j.reason).toMatch(reason ?? /./);
    else expect(j.reason).toBeUndefined();
  });

  it('records each claim with its citations and verdict, as run.feedback carries them', () => {
    const j = judgeClaims('I read sum.js (obs-1). All tests pass (obs-2).', RUN);
    expect(j.claims).toEqual([
      { claim: 'I read sum.js (obs-1).', cites: ['obs-1'], supported: true },
      {
        claim: 'All tests pass (obs-2).',
        cites: ['obs-2'],
        supported: false,
        reason: '"pass" cites obs-2, which shows a failure (exit code 1)',
      },
    ]);
  });

  it('refuses an answer too long to read, and one with too many claims, without reading them', () => {
    const long = judgeClaims('x'.repeat(CLAIM_LIMITS.maxAnswerChars + 1), RUN);
    expect(long).toMatchObject({ supported: false, claims: [] });
    expect(long.reason).toMatch(/characters/);
    const many = judgeClaims('I looked. '.repeat(CLAIM_LIMITS.maxClaims + 1), RUN);
    expect(many).toMatchObject({ supported: false, claims: [] });
    expect(many.reason).toMatch(/more than 100/);
  });

  it('stays fast on hostile input (unclosed code spans, long runs of punctuation and citations)', () => {
    const hostile = [
      '`'.repeat(3000) + 'a',
      '``a`'.repeat(3000),
      '(obs-1, '.repeat(1900),
      'A. ' + '(obs-1 , , '.repeat(1400) + 'x',
      '. '.repeat(7900),
      'a.'.repeat(7900),
      '<!--'.repeat(3900),
      'Fixed ' + 'a/'.repeat(7900),
    ];
    const started = Date.now();
    for (const a of hostile) {
      const t = Date.now();
      judgeClaims(a.slice(0, CLAIM_LIMITS.maxAnswerChars), RUN);
      expect(Date.now() - t, a.slice(0, 20)).toBeLessThan(1000);
    }
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('keeps each recorded claim within the event schema (2000 characters)', () => {
    const j = judgeClaims(`All tests pass ${'and pass '.repeat(400)}(obs-6).`, RUN);
    expect(j.claims[0]!.claim.length).toBeLessThanOrEqual(2000);
  });
});

describe('test, build and check commands', () => {
  it.each([
    ['npm test', true],
    ['npm t', true],
    ['npm run build', true],
    ['npm run test:unit -- --reporter dot', true],
    ['npm --prefix web test', true],
    ['pnpm lint', true],
    ['yarn test:e2e', true],
    ['npx vitest run src', true],
    ['npx --yes jest', true],
    ['node --test', true],
    ['python -m pytest -q', true],
    ['pytest tests/', true],
    ['go test ./...', true],
    ['cargo build --release', true],
    ['make', true],
    ['make -C lib check', true],
    ['tsc --noEmit', true],
    ['./gradlew test', true],
    ['mvn -q verify', true],
    ['cd web && npm test', true],
    ['npm ci && npm test 2>&1', true],
    ['CI=1 npm test', true],
    ['timeout 120 go test ./...', true],
    ['set -o pipefail; npm test | tail -20', true],
    ['set -e; npm test; echo done', true],
    ["npm test -- -t 'a|b'", true],
    ['./scripts/verify.sh', true],
    ['npm test; echo done', false],
    ['npm test || true', false],
    ['npm test | tail -20', false],
    ['npm test && set -e; true', false],
    ['npm test &', false],
    ['npm test $(true)', false],
    ['(npm test)', false],
    ['! npm test', false],
    ['PATH=/tmp/fake:$PATH npm test', false],
    ['bash -c "npm test"', false],
    ['echo npm test', false],
    ['npm run deploy', false],
    ['make deploy', false],
    ['ls -la', false],
  ])('%s -> %s', (command, fits) => {
    expect(checkCommandFit(command, './scripts/verify.sh').fits).toBe(fits);
  });
});
