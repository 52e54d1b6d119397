/**
 * Whether a task title is too vague to execute and check (issue 15: "every task concrete"). A plan
 * is an approved scope: a title such as "Clean code" lets any change count as the task, so a
 * person approving it approves nothing in particular. The detector is data: phrases that are vague
 * whole, words that say nothing about what is acted on, and examples that must pass or fail,
 * checked when this module loads (a change to the lists that breaks an example fails at once).
 */

/** Whole titles (normalised) that name no action on anything in particular. */
const VAGUE_PHRASES: readonly string[] = [
  'clean code',
  'clean up',
  'cleanup',
  'clean up the code',
  'make it faster',
  'make it better',
  'make it work',
  'improve performance',
  'improve the code',
  'fix things',
  'fix stuff',
  'fix it',
  'fix everything',
  'fix bugs',
  'fix the bugs',
  'refactor',
  'refactor code',
  'refactor the code',
  'optimize',
  'optimise',
  'tidy up',
  'polish',
  'misc',
  'various fixes',
  'general improvements',
  'do the task',
  'finish the task',
  'finish up',
  'tbd',
  'todo',
  'wip',
];

/**
 * Words that say how much or how well, never on what: a title made only of these (and filler) has
 * no object. "Improve the code quality" is all of them; "Fix the login redirect" is not.
 */
const EMPTY_WORDS = new Set(
  (
    'a an the it its this that these those all everything things thing stuff some any more much ' +
    'and or of to in on for with up out be is are do make makes get code codebase quality ' +
    'better faster cleaner nicer good great best performance speed fast quick quickly overall general ' +
    'improve improves improvement improvements enhance enhancement optimize optimise optimization ' +
    'optimisation refactor refactoring clean cleanup tidy polish fix fixes fixing bug bugs issue ' +
    'issues problem problems work working update updates change changes misc various stuff task tasks ' +
    'step steps finish done complete handle deal sort'
  ).split(' '),
);

/** Fewer words than this need a concrete object (a path, a name, a number) to count as specific. */
const MIN_WORDS = 3;

/** Something a title acts on that can be looked up: a path, a file, an identifier, a number, a quoted name. */
const CONCRETE_TOKEN =
  /[/\\]|`[^`]+`|"[^"]+"|'[^'\s][^']*'|\.[a-z0-9]{1,6}\b|\d|[a-z][A-Z]|\w_\w|\w\(\)|(^|\s)--?\w|#\w/;

/** Scripts written without spaces between words: each character stands for about half a word. */
const UNSPACED = '[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Thai}]';
const UNSPACED_CHAR = new RegExp(UNSPACED, 'u');
const UNSPACED_CHARS = new RegExp(UNSPACED, 'gu');

const EXAMPLE = 'e.g. "Remove unused imports from src/a.ts" or "Add a test for parseDate in test/date.test.ts"';

/** What is vague about a title, saying what to write instead; undefined for a concrete title. */
export function vagueTitleProblem(title: string): string | undefined {
  const text = normalise(title);
  const quoted = JSON.stringify(title.length > 80 ? `${title.slice(0, 77)}…` : title);
  if (text === '') return `the title is empty: say what the task does to what (${EXAMPLE})`;
  if (VAGUE_PHRASES.includes(text))
    return `${quoted} is vague: name the change and what it applies to, so its result can be checked (${EXAMPLE})`;
  const words = text.split(' ');
  const concrete = CONCRETE_TOKEN.test(title);
  if (!concrete && words.every((w) => EMPTY_WORDS.has(w)))
    return (
      `${quoted} is vague: it says how, not on what (a file, a function, a command, a behaviour); ` +
      `name the object (${EXAMPLE})`
    );
  const unspaced = (title.match(UNSPACED_CHARS) ?? []).length;
  const wordCount = words.filter((w) => !UNSPACED_CHAR.test(w)).length + Math.floor(unspaced / 2);
  if (wordCount < MIN_WORDS && !concrete)
    return (
      `${quoted} is too short to be specific: write at least ${MIN_WORDS} words naming the action and ` +
      `its object (${EXAMPLE})`
    );
  return undefined;
}

/** Lower case, punctuation at word edges dropped, one space between words. */
function normalise(title: string): string {
  return title
    .toLowerCase()
    .replace(/[.!?,;:…]+(?=\s|$)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Titles the detector must accept and refuse; asserted below, when the module loads. */
export const VAGUE_TITLE_EXAMPLES = {
  concrete: [
    'Remove unused imports from src/a.ts',
    'Add a test for parseDate in test/date.test.ts',
    'Fix the login redirect loop',
    'Run npm test and record the failures',
    'Refactor src/config/load.ts into two files',
    'Make parseDate accept ISO week dates',
    'Rename getUser to fetchUser',
    'Bump lodash to 4.17.21',
    'Übersetze die Fehlermeldungen in src/i18n/de.json',
    'Delete the build directory',
    'Response time of GET /users under 200ms',
    '删除 src/a.ts 中未使用的导入',
    '为登录页面添加单元测试',
  ],
  vague: [
    'Clean code',
    'Make it faster',
    'improve performance',
    'Fix things',
    'Refactor',
    'optimize',
    'Make it better.',
    'Improve the code quality',
    'Fix bugs',
    'Cleanup',
    'Update stuff',
    'Tests',
    'Do it',
    '',
    '   ',
    '改进',
  ],
} as const;

for (const t of VAGUE_TITLE_EXAMPLES.concrete) {
  const p = vagueTitleProblem(t);
  if (p !== undefined) throw new Error(`vague-title: example ${JSON.stringify(t)} must pass, but: ${p}`);
}
for (const t of VAGUE_TITLE_EXAMPLES.vague) {
  if (vagueTitleProblem(t) === undefined) throw new Error(`vague-title: example ${JSON.stringify(t)} must fail`);
}
