import type { CommandClass } from '../types';
import type { Aliases, Example } from './family';

/**
 * Interpreters: running a project file is project code (test-build); code given on the command
 * line (`node -e`, `python -c`) or read from standard input cannot be seen (unknown). The code
 * that reads these is interpreters.ts.
 */

/** How an interpreter takes code and options. */
export interface Interpreter {
  /** Options that run code given on the command line. */
  inline: string[];
  /** Options that take a value (so the value is not mistaken for the script). */
  valued: string[];
}

export const INTERPRETERS: Record<string, Interpreter> = {
  node: {
    inline: ['-e', '--eval', '-p', '--print'],
    valued: ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--env-file'],
  },
  python: { inline: ['-c'], valued: ['-W', '-X', '-Q'] },
  ruby: { inline: ['-e'], valued: ['-r', '-I', '-C'] },
  perl: { inline: ['-e', '-E'], valued: ['-I', '-M', '-m'] },
  php: { inline: ['-r', '-R', '-B', '-E'], valued: ['-c', '-d', '-z'] },
  tsx: { inline: ['-e', '--eval', '-p', '--print'], valued: ['--tsconfig'] },
  'ts-node': {
    inline: ['-e', '--eval', '-p', '--print'],
    valued: ['-P', '--project', '-r', '--require', '-C', '--compiler'],
  },
};

/** Python modules run with `-m`, by class; others are unknown. */
export const PYTHON_MODULES: Record<string, CommandClass> = {
  pytest: 'test-build',
  unittest: 'test-build',
  mypy: 'test-build',
  pylint: 'test-build',
  flake8: 'test-build',
  coverage: 'test-build',
  tox: 'test-build',
  doctest: 'test-build',
  compileall: 'test-build',
  py_compile: 'test-build',
  build: 'test-build',
  ruff: 'test-build',
  black: 'write',
  isort: 'write',
  venv: 'write',
  virtualenv: 'write',
  'json.tool': 'read-only',
  site: 'read-only',
  platform: 'read-only',
  'http.server': 'network',
  ensurepip: 'network',
};

export const INTERPRETER_ALIASES: Aliases = {
  nodejs: 'node',
  python3: 'python',
  python2: 'python',
  pypy: 'python',
  pypy3: 'python',
};

export const INTERPRETER_EXAMPLES: Example[] = [
  ['node script.js', 'test-build'],
  ['node --test', 'test-build'],
  ['node -e "process.exit()"', 'unknown'],
  ['node -pe 1', 'unknown'],
  ['node --version', 'read-only'],
  ['python3 -m pytest', 'test-build'],
  ['python -m http.server', 'network'],
  ['python -m pip install x', 'network'],
  ['python -m frobnicate', 'unknown'],
  ['python3.12 -c "print(1)"', 'unknown'],
  ['perl -pie 1 f', 'unknown'],
  ['ruby -I lib test.rb', 'test-build'],
  ['python', 'unknown'],
];
