import path from 'node:path';
import { isCheckCommand } from './check-command';

/**
 * Whether a bash command is a test, build or check command whose exit code says so: what a claim
 * like "the tests pass" must cite. It recognises intent, not integrity (a test script changed to
 * `exit 0` is a change the diff shows, and the configured check catches); what it refuses is a
 * command whose exit code would hide the result: `npm test || true`, `npm test; echo done`,
 * `npm test | tail` (without pipefail), a background `&`, command substitution, subshells.
 * docs/claims.md lists the commands.
 */
export type CommandFit = { fits: true } | { fits: false; why: string };

const MAX_COMMAND = 4096;
/** For the model, in a refusal: what counts (the full list is in docs/claims.md). */
const KNOWN =
  'such as npm/pnpm/yarn test or run build|lint|check, node --test, npx vitest/jest, pytest, go test, ' +
  'cargo test/build, make, tsc, mvn, gradle, or the configured check command';

/** Script names of package managers (npm run NAME, pnpm NAME, …) that test, build or check. */
const SCRIPT_NAME =
  /^(?:test|tests|unit|e2e|spec|build|compile|lint|check|checks|typecheck|type-check|types|tsc|verify|ci)(?:[:_-][\w:.-]*)?$/i;
/** Programs that are a test, build or check run whatever their arguments. */
const TOOLS = new Set([
  'vitest',
  'jest',
  'mocha',
  'ava',
  'tap',
  'tape',
  'jasmine',
  'karma',
  'tsc',
  'vue-tsc',
  'eslint',
  'biome',
  'pytest',
  'py.test',
  'tox',
  'nox',
  'mypy',
  'pyright',
  'flake8',
  'pylint',
  'rspec',
  'phpunit',
  'ctest',
  'make',
  'gmake',
  'ninja',
  'nextest',
]);
/** Programs whose subcommand decides: `go test`, `cargo build`, `mvn verify`, … */
const SUBCOMMANDS: Record<string, RegExp> = {
  go: /^(?:test|build|vet)$/,
  cargo: /^(?:test|build|check|clippy|nextest)$/,
  mvn: /^(?:test|verify|package|compile|install|test-compile)$/,
  gradle: /^(?:test|build|check|assemble|compileJava|compileKotlin)$/,
  dotnet: /^(?:test|build)$/,
  swift: /^(?:test|build)$/,
  deno: /^(?:test|check|lint)$/,
  bun: /^test$/,
  mix: /^(?:test|compile)$/,
  bazel: /^(?:test|build)$/,
  sbt: /^(?:test|compile)$/,
  rake: /^(?:test|spec)$/,
  ruff: /^check$/,
  playwright: /^test$/,
  cypress: /^run$/,
  cmake: /^--build$/,
  prettier: /^(?:--check|-c)$/,
};
/** Run another program: the program after them decides (`npx vitest`, `python -m pytest`, `timeout 60 go test`). */
const RUNNERS = new Set(['npx', 'bunx', 'pnpx', 'env', 'time', 'timeout', 'nice', 'xvfb-run', 'c8', 'nyc', 'exec']);
const PM = new Set(['npm', 'pnpm', 'yarn', 'bun']);
/**
 * Variables in front of a command that choose what runs or how: another program (PATH, LD_PRELOAD,
 * a shell's startup file), the package manager's or the tool's own settings (`npm_config_*`, where
 * `script_shell=true` runs no script; MAKEFLAGS=-n; PYTEST_ADDOPTS=--co; GOFLAGS; a cargo test
 * runner), or where they are read from (HOME, XDG_*). NODE_ENV and the like stay allowed.
 */
const STEERING_VARIABLE =
  /^(?:PATH|BASH_ENV|ENV|SHELL|IFS|HOME|XDG_\w*|LD_\w*|DYLD_\w*|NODE_(?!ENV=)\w*|PYTHON\w*|CARGO\w*|RUSTC\w*|GOTOOLCHAIN|npm_config_\w*|yarn_\w*|pnpm_\w*|bun_\w*|\w*FLAGS|\w*OPTS|\w*OPTIONS)=/i;
/**
 * Arguments that make a test or build tool print something and run nothing, or run no test: help
 * and version, dry runs and listings (pytest --collect-only, jest --listTests, cargo test
 * --no-run, go test -list), a package manager's script shell replaced, npx's program taken from
 * another package.
 */
const RUNS_NOTHING =
  /^(?:--package=.*|--help|--version|--dry-run|--collect-only|--co|--fixtures|--markers|--setup-plan|--setup-only|--listTests|--list-tests|--showConfig|--show-config|--print-config|--init|--no-run|-list|--list|--script-shell(?:=.*)?)$/;
/** Options of package managers that take a value (`npm --prefix dir test`). */
const PM_VALUE_OPTIONS = new Set(['--prefix', '-C', '--dir', '-w', '--workspace', '--filter', '-F', '--cwd']);

/** Whether `command` is a test, build or check command; `configured` is the run's check command. */
export function checkCommandFit(command: string, configured?: string): CommandFit {
  if (command.length > MAX_COMMAND) return { fits: false, why: 'the command is too long to read' };
  // The run's own check command is one, by the check's own rule of what counts as it (check-command.ts).
  if (configured && isCheckCommand(command, configured)) return { fits: true };
  const parsed = parse(command);
  if ('why' in parsed) return { fits: false, why: parsed.why };
  const { chains, errexit, pipefail } = parsed;
  // Tests of another folder (`cd /tmp/fake && npm test`, `npm --prefix /tmp/fake test`) say nothing of the workspace's.
  const outside = directoryOutsideWorkspace(chains);
  if (outside) return { fits: false, why: `it runs in ${JSON.stringify(outside)}, outside the workspace` };
  // Whose exit codes make the command's: the last chain's, every pipeline of it (`a && b` fails if
  // either does); with `set -e` also each earlier chain's last pipeline (set -e ignores the others).
  const counted = chains.flatMap((chain, k) => (k === chains.length - 1 ? chain : errexit ? chain.slice(-1) : []));
  for (const pipeline of counted) {
    // Without pipefail a pipeline's exit code is its last command's.
    const members = pipefail ? pipeline : pipeline.slice(-1);
    if (
      members.some((argv) => isCheck(argv) || (configured !== undefined && isCheckCommand(argv.join(' '), configured)))
    )
      return { fits: true };
  }
  const piped = counted.some((p) => p.length > 1 && p.slice(0, -1).some(isCheck));
  if (piped) return { fits: false, why: "its exit code is the pipe's last command's, not the test's (no pipefail)" };
  const steered = chains
    .flat(2)
    .map(steeredWhy)
    .find((w) => w !== undefined);
  if (steered) return { fits: false, why: steered };
  const hidden = chains.some((c) => c.some((p) => p.some(isCheck)));
  if (hidden) return { fits: false, why: "its exit code is a later command's, not the test's" };
  return { fits: false, why: `it is not a test, build or check command (${KNOWN})` };
}

function isCheck(argv: readonly string[]): boolean {
  let words = argv.filter((w, i) => !/^\d*[<>]|^&>/.test(w) && !/^\d*[<>]{1,2}&?$/.test(argv[i - 1] ?? ''));
  // Leading variable assignments; PATH and friends could put another program in the test's place,
  // and a tool's own variables can make it run nothing (npm_config_script_shell=true, MAKEFLAGS=-n).
  while (words[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) {
    if (STEERING_VARIABLE.test(words[0])) return false;
    words = words.slice(1);
  }
  const [head, ...rest] = words;
  if (!head) return false;
  const name = head.split('/').at(-1)!;
  if (runsNoTest(name, rest)) return false;
  if (name === 'npm' && rest[0] === 'exec') return isCheck(rest.slice(1));
  if (RUNNERS.has(name)) {
    const i = rest.findIndex((w) => !w.startsWith('-') && !/^\d+[smhd]?$/.test(w));
    return i >= 0 && isCheck(rest.slice(i));
  }
  if (/^python[\d.]*$/.test(name) || name === 'py') {
    const m = rest.indexOf('-m');
    return m >= 0 && /^(?:pytest|unittest|mypy|compileall|tox|nox)$/.test(rest[m + 1] ?? '');
  }
  if (/^(?:poetry|pipenv|uv|pdm|hatch)$/.test(name)) return rest[0] === 'run' && isCheck(rest.slice(1));
  if (name === 'bundle') return rest[0] === 'exec' && isCheck(rest.slice(1));
  if (name === 'node') return rest.includes('--test') || (rest[0] === '--run' && SCRIPT_NAME.test(rest[1] ?? ''));
  if (PM.has(name)) return packageScript(name, rest);
  if (name === 'mvnw' || name === 'gradlew') return SUBCOMMANDS[name === 'mvnw' ? 'mvn' : 'gradle']!.test(sub(rest));
  if (name === 'make' || name === 'gmake') {
    const targets = rest.filter(
      (w, i) => !w.startsWith('-') && !/^-[Cjf]$/.test(rest[i - 1] ?? '') && !w.includes('='),
    );
    return targets.every((t) => /^(?:all|test|tests|check|build|lint|ci|verify|typecheck)$/.test(t));
  }
  if (TOOLS.has(name)) return true;
  const pattern = SUBCOMMANDS[name];
  return pattern !== undefined && rest.some((w) => pattern.test(w));
}

/** The argument that makes a test or build command run no test (`--help`, `make -n`), if it has one. */
function runsNoTest(name: string, rest: readonly string[]): string | undefined {
  const found = rest.find((w) => RUNS_NOTHING.test(w));
  if (found) return found;
  if ((name === 'vitest' || name === 'jest' || name === 'mocha') && rest[0] === 'list') return 'list';
  if (name === 'make' || name === 'gmake')
    return rest.find(
      (w) => /^-(?![jCfIoWl])[a-zA-Z]*[nqt]/.test(w) || /^--(?:dry-run|just-print|recon|question|touch)$/.test(w),
    );
  return undefined;
}

/** Why a command that looks like a test run is not one: a variable or an argument that steers it. */
function steeredWhy(argv: readonly string[]): string | undefined {
  let i = 0;
  for (; i < argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i]!); i++) {
    const name = argv[i]!.split('=')[0]!;
    if (STEERING_VARIABLE.test(argv[i]!)) return `${name} set in front of it can change what runs`;
  }
  // Past `npx`, `timeout 60` and the like, to the program they run.
  while (i < argv.length && RUNNERS.has(argv[i]!.split('/').at(-1)!)) {
    i++;
    while (i < argv.length && (argv[i]!.startsWith('-') || /^\d+[smhd]?$/.test(argv[i]!))) {
      if (RUNS_NOTHING.test(argv[i]!)) return `with ${JSON.stringify(argv[i])} it runs something other than the tests`;
      i++;
    }
  }
  const name = argv[i]?.split('/').at(-1) ?? '';
  const arg = runsNoTest(name, argv.slice(i + 1));
  return arg === undefined ? undefined : `with ${JSON.stringify(arg)} it runs something other than the tests`;
}

/** `npm test`, `npm run build`, `pnpm lint`, `yarn test:unit`, `bun run check`. */
function packageScript(pm: string, rest: readonly string[]): boolean {
  const words: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    if (PM_VALUE_OPTIONS.has(rest[i]!)) i++;
    else if (!rest[i]!.startsWith('-')) words.push(rest[i]!);
  }
  const [first, second] = words;
  if (first === 'test' || first === 't' || first === 'tst') return true;
  if (first === 'run' || first === 'run-script') return SCRIPT_NAME.test(second ?? '');
  if (pm === 'pnpm' && (first === 'exec' || first === 'dlx')) return isCheck(words.slice(1));
  if (pm === 'yarn' && first === 'dlx') return isCheck(words.slice(1));
  // pnpm and yarn run a script by its name alone.
  return (pm === 'pnpm' || pm === 'yarn') && SCRIPT_NAME.test(first ?? '');
}

/** Where the workspace is inside the sandbox: commands start there. */
const WORKSPACE = '/workspace';
/** Options that name the folder a tool works in (npm --prefix, make -C, pnpm --dir, yarn --cwd, git -C). */
const DIRECTORY_OPTIONS = /^(?:--prefix|-C|--dir|--cwd|--directory|--manifest-path|--rootdir|--root|--project|-p)$/;

/**
 * The first folder outside the workspace a command's `cd`, `pushd` or directory option names,
 * followed in order (`cd a && cd ../..`), or undefined. `~`, `-` and variables are outside: they
 * are not a workspace path this reader can follow.
 */
function directoryOutsideWorkspace(chains: string[][][][]): string | undefined {
  let cwd = WORKSPACE;
  const inside = (dir: string) => {
    if (/^[~$-]/.test(dir)) return undefined;
    const resolved = path.posix.resolve(cwd, dir);
    return resolved === WORKSPACE || resolved.startsWith(`${WORKSPACE}/`) ? resolved : undefined;
  };
  for (const argv of chains.flat(2)) {
    const name = argv[0]?.split('/').at(-1);
    if (name === 'cd' || name === 'pushd') {
      const to = argv.slice(1).find((w) => !/^-[LPe@]+$/.test(w)) ?? '~';
      const next = inside(to);
      if (!next) return to;
      cwd = next;
      continue;
    }
    // Only a test or build command's own options place it (`mkdir -p /tmp/x` places nothing).
    if (!isCheck(argv)) continue;
    for (let i = 1; i < argv.length; i++) {
      const w = argv[i]!;
      const eq = /^(--[\w-]+)=(.*)$/.exec(w);
      const [option, value] = eq ? [eq[1]!, eq[2]!] : [w, argv[i + 1]];
      if (!DIRECTORY_OPTIONS.test(option) || value === undefined) continue;
      // `tsc -p` names a project file or folder, `pytest --rootdir` a folder: both are places.
      if (!inside(value)) return value;
    }
  }
  return undefined;
}

function sub(rest: readonly string[]): string {
  return rest.find((w) => !w.startsWith('-')) ?? '';
}

interface Parsed {
  /** `;`- or newline-separated chains; each chain `&&`-joined pipelines; each pipeline its commands' words. */
  chains: string[][][][];
  /** The script starts with `set -e` / `set -o pipefail`. */
  errexit: boolean;
  pipefail: boolean;
}

/** A small shell reader: words, quotes, and the operators that decide whose exit code is the command's. */
function parse(command: string): Parsed | { why: string } {
  const chains: string[][][][] = [[[[]]]];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  const cmd = () => chains.at(-1)!.at(-1)!.at(-1)!;
  const endWord = () => {
    if (inWord) cmd().push(word);
    word = '';
    inWord = false;
  };
  const endCommand = endWord;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    const next = command[i + 1];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (c === '\\') {
      word += next ?? '';
      inWord = true;
      i++;
      continue;
    }
    if (c === '`' || (c === '$' && next === '(')) return { why: 'it uses command substitution' };
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
      continue;
    }
    if (c === '(' || c === ')' || c === '{' || c === '}') return { why: 'it uses a subshell, group or function' };
    if (c === '|' && next === '|') return { why: 'it uses "||", which can hide a failure' };
    if (c === '&' && next === '&') {
      endCommand();
      chains.at(-1)!.push([[]]);
      i++;
      continue;
    }
    if (c === '&' && next !== '>' && !/[<>]$/.test(word)) return { why: 'it runs something in the background' };
    if (c === '|') {
      endCommand();
      chains.at(-1)!.at(-1)!.push([]);
      if (next === '&') i++;
      continue;
    }
    if (c === ';' || c === '\n') {
      endCommand();
      chains.push([[[]]]);
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      continue;
    }
    word += c;
    inWord = true;
  }
  if (quote) return { why: 'it has an unclosed quote' };
  endCommand();
  // Empty commands (`a;;b`, a trailing `;`) are dropped.
  const kept = chains
    .map((chain) => chain.map((p) => p.filter((argv) => argv.length > 0)).filter((p) => p.length > 0))
    .filter((chain) => chain.length > 0);
  // `set -e` and `set -o pipefail` count only as the script's first lines, alone: there they hold for
  // everything after (anywhere else, who runs before them is a puzzle this reader does not solve).
  let lead = 0;
  let errexit = false;
  let pipefail = false;
  for (const chain of kept) {
    const argv = chain.length === 1 && chain[0]!.length === 1 ? chain[0]![0]! : undefined;
    if (argv?.[0] !== 'set') break;
    const flags = argv.slice(1).join(' ');
    if (/(?:^|\s)-[a-z]*e|-o errexit/.test(flags)) errexit = true;
    if (/-o pipefail/.test(flags)) pipefail = true;
    lead++;
  }
  return { chains: kept.slice(lead), errexit, pipefail };
}
