import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { ConfigError, ConfigRefusedError } from '../../src/config/errors';
import { loadProjectConfig } from '../../src/config/load';
import { problemText } from '../../src/problems/file-problems';
import { repoWith, scratch, trustedFile } from './helpers';

/** Every problem of a trusted config file, as `path: message` lines. */
function problemsOf(config: unknown): string[] {
  try {
    loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile(config) });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  }
  throw new Error('the config was accepted');
}

describe('every problem of a config is listed at once, each with its JSON path', () => {
  it.each<[string, unknown, string[]]>([
    ['a misspelt key', { imgae: 'preset:node' }, ['imgae: unknown key; did you mean image?']],
    ['a misspelt nested key', { limits: { cpu: 2 } }, ['limits.cpu: unknown key; did you mean cpus?']],
    [
      'an unknown key with nothing close',
      { egress: { sideways: [] } },
      ['egress.sideways: unknown key; known: setup, agent, deny'],
    ],
    ['memory as text', { limits: { memoryMb: '1g' } }, ['limits.memoryMb: expected a positive whole number, got "1g"']],
    ['a fraction of a pid', { limits: { pids: 1.5 } }, ['limits.pids: expected a positive whole number, got 1.5']],
    [
      'zero cpus',
      { limits: { cpus: 0 } },
      ['limits.cpus: expected a positive number of CPUs (fractions allowed), got 0'],
    ],
    [
      'a negative budget',
      { budgets: { maxTurns: -1 } },
      ['budgets.maxTurns: expected a positive whole number, got -1'],
    ],
    [
      'an unknown budget',
      { budgets: { speed: 5 } },
      [expect.stringMatching(/^budgets\.speed: unknown key; known: maxTurns/)],
    ],
    [
      'a misspelt cost budget',
      { budgets: { maxCost: 5 } },
      [expect.stringMatching(/^budgets\.maxCost: unknown key; known: .*maxCostUsd/)],
    ],
    [
      'a cost budget of nothing',
      { budgets: { maxCostUsd: 0 } },
      ['budgets.maxCostUsd: expected a positive number of US dollars, such as 2.5, got 0'],
    ],
    [
      'a price as text, a price without output, a key that is no model',
      {
        prices: {
          'openai:gpt-4.1': { input: '2$', output: 8 },
          'anthropic:x': { input: 1 },
          'gpt-4o': { input: 1, output: 1 },
        },
      },
      [
        'prices.openai:gpt-4.1.input: expected US dollars per million tokens (a number, 0 or more), got "2$"',
        'prices.anthropic:x.output: expected US dollars per million tokens (a number, 0 or more)',
        expect.stringMatching(/^prices\.gpt-4o: a price is keyed by provider:model/),
      ],
    ],
    [
      'a URL as a host',
      { egress: { setup: ['https://registry.npmjs.example.com/'] } },
      [
        'egress.setup[0]: no scheme: write the host alone (registry.npmjs.example.com), got "https://registry.npmjs.example.com/"',
      ],
    ],
    [
      'a port out of range',
      { egress: { agent: ['ok.example.com', 'host:70000'] } },
      ['egress.agent[1]: a port is 1 to 65535, got "host:70000"'],
    ],
    [
      'an unknown preset',
      { image: 'preset:rust' },
      ['image: there is no preset "rust"; presets: preset:node, preset:python, got "preset:rust"'],
    ],
    ['a bad image reference', { image: 'Not An Image' }, [expect.stringMatching(/^image: expected preset:node/)]],
    [
      'an unclosed glob',
      { copy: { exclude: ['src/[ab'] } },
      ['copy.exclude[0]: a [ is not closed with ], got "src/[ab"'],
    ],
    [
      'a glob leaving the repository',
      { copy: { include: ['../secrets/**'] } },
      ['copy.include[0]: a glob cannot leave the repository (..), got "../secrets/**"'],
    ],
    ['an empty setup command', { setup: ['npm ci', '  '] }, ['setup[1]: a command line cannot be empty, got "  "']],
    ['setup as one string', { setup: 'npm ci' }, ['setup: expected a list ([...]), got "npm ci"']],
    ['a policy of the wrong type', { policy: 3 }, [expect.stringMatching(/^policy: expected a policy object/)]],
    ['a misspelt policy key', { policy: { dney: ['bash(curl*)'] } }, ['policy.dney: unknown key; did you mean deny?']],
    [
      'a policy rule that does not parse',
      { policy: { deny: ['bash(curl*'] } },
      [expect.stringMatching(/^policy\.deny\[0\]: /)],
    ],
    ['a top level that is a list', ['npm ci'], [expect.stringMatching(/^expected a JSON object/)]],
  ])('%s', (_name, config, expected) => {
    expect(problemsOf(config)).toEqual(expected);
  });

  it('lists several problems of one file together, in one usage error (exit 2)', () => {
    const config = {
      imgae: 'python:3.12-slim',
      setup: ['npm ci', 7],
      egress: { setup: ['registry.npmjs.example.com', 'https://evil.example.com/x'], agnet: [] },
      limits: { memoryMb: '1g', cpus: 2 },
      budgets: { maxTurns: 0 },
      copy: { exclude: ['{a,b'] },
    };
    let error: unknown;
    try {
      loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile(config) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const paths = (error as ConfigError).problems.map((p) => p.path).sort();
    expect(paths).toEqual(
      [
        'imgae',
        'setup[1]',
        'egress.setup[1]',
        'egress.agnet',
        'limits.memoryMb',
        'budgets.maxTurns',
        'copy.exclude[0]',
      ].sort(),
    );
    expect((error as Error).message).toMatch(/^the project config is not valid \(7 problems\):\n/);
    expect((error as Error).message).toContain('limits.memoryMb: expected a positive whole number, got "1g"');
    expect(exitCodeOfError(error)).toBe(2);
  });

  it('lists the problems of the trusted file and of the repository file together', () => {
    const repo = repoWith({ limits: { pids: 'many' } });
    let error: unknown;
    try {
      loadProjectConfig({ repoDir: repo, configFile: trustedFile({ check: 5 }) });
    } catch (e) {
      error = e;
    }
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => [path.basename(p.file), p.path])).toEqual([
      ['trusted.json', 'check'],
      ['config.json', 'limits.pids'],
    ]);
  });

  it('a key given twice is a problem, with its line', () => {
    const file = trustedFile('{\n  "image": "preset:python",\n  "image": "preset:node"\n}\n');
    expect(() => loadProjectConfig({ repoDir: repoWith(), configFile: file })).toThrow(
      `${file}:3:3: image: this key is given twice`,
    );
  });
});

describe('JSON syntax errors say the line and column', () => {
  it.each([
    ['{\n  "image": "preset:node",\n}\n', 3, 1, /another key \(no comma after the last entry\)/],
    ['{\n  "setup": ["npm ci" "npm test"]\n}', 2, 22, /expected "," or "]"/],
    ['{\n  "image": preset:node\n}', 2, 12, /expected a value/],
    ["{ 'image': 'x' }", 1, 3, /expected a "key"/],
    ['{ "check": "npm\ntest" }', 1, 16, /line break/],
    ['{ "image": "preset:node" } {}', 1, 28, /the end of the file/],
    ['', 1, 1, /unexpected end of file/],
    ['{ "setup": [1, ] }', 1, 16, /another value/],
  ])('%j → line %i column %i', (text, line, column, message) => {
    let error: ConfigError | undefined;
    try {
      loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile(text) });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(1);
    const [p] = error!.problems;
    expect([p!.line, p!.column]).toEqual([line, column]);
    expect(p!.message).toMatch(message);
    expect(problemText(p!)).toMatch(new RegExp(`trusted\\.json:${line}:${column}: not valid JSON`));
  });

  it('a syntax error in the repository config is reported the same way', () => {
    const repo = repoWith('{"limits": {"pids": 10,}}');
    expect(() => loadProjectConfig({ repoDir: repo })).toThrow(/\.gatehouse\/config\.json:1:24: not valid JSON/);
  });
});

describe('files that cannot be used', () => {
  it('--config naming a missing file is a usage error naming it', () => {
    const missing = path.join(scratch(), 'nope.json');
    let error: unknown;
    try {
      loadProjectConfig({ repoDir: repoWith(), configFile: missing });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`${missing}: cannot read the config file: no such file`);
    expect(exitCodeOfError(error)).toBe(2);
  });

  it('a symlinked repository config is refused (exit 1), naming the link', () => {
    const elsewhere = trustedFile({ egress: { setup: ['evil.example.com'] } });
    const repo = repoWith();
    mkdirSync(path.join(repo, '.gatehouse'));
    symlinkSync(elsewhere, path.join(repo, '.gatehouse', 'config.json'));
    let error: unknown;
    try {
      loadProjectConfig({ repoDir: repo });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigRefusedError);
    expect((error as Error).message).toMatch(/^\.gatehouse\/config\.json is a symbolic link/);
    expect(exitCodeOfError(error)).toBe(1);
  });

  it('a symlinked .gatehouse folder is refused too, even with --config', () => {
    const other = repoWith({ limits: { pids: 10 } });
    const repo = repoWith();
    symlinkSync(path.join(other, '.gatehouse'), path.join(repo, '.gatehouse'));
    expect(() => loadProjectConfig({ repoDir: repo, configFile: trustedFile({}) })).toThrow(
      /^\.gatehouse is a symbolic link/,
    );
  });

  it("a repository config's policy path must stay inside the repository, through no link", () => {
    const outside = trustedFile({ deny: ['bash(rm*)'] });
    const repo = repoWith({ policy: outside });
    expect(() => loadProjectConfig({ repoDir: repo })).toThrow(
      /policy: a repository's config can only name a policy file inside/,
    );
    const linked = repoWith({ policy: 'linked.json' });
    symlinkSync(outside, path.join(linked, '.gatehouse', 'linked.json'));
    expect(() => loadProjectConfig({ repoDir: linked })).toThrow(/\.gatehouse\/linked\.json is a symbolic link/);
  });

  it("a trusted config's policy path is resolved beside it and must exist", () => {
    const file = trustedFile({ policy: 'policy.json' });
    expect(() => loadProjectConfig({ repoDir: repoWith(), configFile: file })).toThrow(
      `policy: no such policy file ${path.join(path.dirname(file), 'policy.json')}`,
    );
    writeFileSync(path.join(path.dirname(file), 'policy.json'), '{}');
    expect(loadProjectConfig({ repoDir: repoWith(), configFile: file }).policy).toEqual({
      file: path.join(path.dirname(file), 'policy.json'),
      trusted: true,
    });
  });

  it('--image is checked like a config image', () => {
    expect(() => loadProjectConfig({ repoDir: repoWith(), image: 'preset:ruby' })).toThrow(
      /--image: there is no preset "ruby"/,
    );
  });
});
