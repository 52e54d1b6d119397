import { describe, expect, it } from 'vitest';
import { programNames } from '../../src/environment/program-names';

describe('programNames', () => {
  const table: Array<[string, string[]]> = [
    ['npm ci', ['npm']],
    ['npm ci && npm run build', ['npm']],
    ['python3 -m pip install -r requirements.txt', ['python3']],
    ['CI=1 NODE_ENV=test npm test', ['npm']],
    ['env -i FOO=1 make check', ['make']],
    ['cd sub && make || echo failed; true', ['cd', 'make', 'echo', 'true']],
    ['./node_modules/.bin/jest --ci', ['./node_modules/.bin/jest']],
    ['.venv/bin/pytest -q | tee out.txt', ['.venv/bin/pytest', 'tee']],
    ["'my tool' --flag", ['my tool']],
    ['"$TOOL" run', []],
    ['`which npm` ci', []],
    ['if test -f x; then make; fi', ['test', 'make']],
    ['(cd a && go test ./...)', ['cd', 'go']],
    ['npm test # comment && rm -rf /', ['npm']],
    ['python3 -m venv .venv\n.venv/bin/pip install .', ['python3', '.venv/bin/pip']],
    ['', []],
  ];
  it.each(table)('%j starts %j', (command, expected) => {
    expect(programNames(command)).toEqual(expected);
  });
});
