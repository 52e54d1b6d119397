import type { CommandClass } from '../types';
import { classTable, type Aliases, type ClassLists, type Example, type SubcommandTable } from './family';

/**
 * Build tools, compilers, test runners, linters and formatters: running them runs the project's
 * code or config (test-build); a formatter's write switch makes it write. The code that reads
 * these is build-tools.ts (and make.ts for make's makefile options).
 */

export const BUILD_CLASSES: ClassLists = {
  'test-build': `
  make gmake cmake ctest ninja meson bazel bazelisk mvn mvnw gradle gradlew ant sbt lein tsc jest
  vitest mocha ava tap karma jasmine cypress pytest py.test tox nox mypy pyright pylint flake8
  pycodestyle pydocstyle bandit coverage rspec rake phpunit gcc g++ cc c++ clang clang++ rustc javac
  kotlinc scalac swift swiftc zig esbuild webpack vite rollup parcel turbo nx lerna tsup swc babel
  stylelint tslint standard xo golangci-lint shellcheck hadolint markdownlint configure`,
};

/** Language toolchains by subcommand. */
export const BUILD_SUBCOMMANDS: Record<string, SubcommandTable> = {
  cargo: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'build b check c test t bench run r doc clippy nextest miri',
      write: 'fmt fix new init remove rm',
      destructive: 'clean',
      network: 'install add fetch update publish search login yank owner',
      'read-only': 'tree metadata version --version help locate-project pkgid',
    }),
  },
  go: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'build test vet run generate tool',
      write: 'fmt fix work',
      destructive: 'clean',
      network: 'get install mod',
      'read-only': 'version env list doc help',
    }),
  },
  dotnet: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'build test run publish pack',
      write: 'format new',
      destructive: 'clean',
      network: 'restore add tool',
      'read-only': '--info --version',
    }),
  },
  bundle: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'exec',
      network: 'install update add',
      'read-only': 'list show check',
    }),
  },
  uv: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'run',
      network: 'sync add lock pip tool',
      write: 'venv remove',
      'read-only': 'tree version',
    }),
  },
  playwright: {
    otherwise: 'unknown',
    classes: classTable({
      'test-build': 'test',
      network: 'install codegen',
      privilege: 'install-deps',
      'read-only': 'show-report',
    }),
  },
};

/** A tool whose class depends on a switch: `eslint` lints, `eslint --fix` writes. */
export interface Switched {
  /** The class without the switch, and with it. */
  without: CommandClass;
  with: CommandClass;
  /** The switch: short letters (in any cluster) and long options. */
  short: string;
  long: string[];
}

/** Tools with a write or fix switch. */
export const FIXERS: Record<string, Switched> = {
  // prettier loads the project's config, which may be JavaScript (prettier.config.js): project code.
  prettier: { without: 'test-build', with: 'write', short: 'w', long: ['--write'] },
  eslint: { without: 'test-build', with: 'write', short: '', long: ['--fix'] },
  biome: { without: 'test-build', with: 'write', short: '', long: ['--write', '--apply', '--fix'] },
  rubocop: { without: 'test-build', with: 'write', short: 'aA', long: ['--autocorrect', '--autocorrect-all'] },
};
/** Tools that write unless told only to check. */
export const CHECKERS: Record<string, Switched> = {
  black: { without: 'write', with: 'test-build', short: '', long: ['--check', '--diff'] },
  isort: { without: 'write', with: 'test-build', short: 'c', long: ['--check', '--check-only', '--diff'] },
  rustfmt: { without: 'write', with: 'test-build', short: '', long: ['--check'] },
};

/** Makefiles read from standard input: their recipes cannot be seen. */
export const STDIN_FILES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

export const BUILD_ALIASES: Aliases = { 'py.test': 'pytest' };

export const BUILD_EXAMPLES: Example[] = [
  ['make', 'test-build'],
  ['make -C sub test', 'test-build'],
  ['make -f - all', 'unknown'],
  ['make --eval=x', 'unknown'],
  ['cargo test', 'test-build'],
  ['cargo add serde', 'network'],
  ['cargo clean', 'destructive'],
  ['cargo frobnicate', 'unknown'],
  ['go vet ./...', 'test-build'],
  ['go get example.com/x', 'network'],
  ['prettier --check .', 'test-build'],
  ['prettier -w .', 'write'],
  ['eslint --fix src', 'write'],
  ['black --check .', 'test-build'],
  ['black .', 'write'],
  ['ruff check .', 'test-build'],
  ['ruff format .', 'write'],
  ['tsc --noEmit', 'test-build'],
  ['py.test', 'test-build'],
];
