import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program';
import { cliInProcess } from '../support/cli-in-process';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });

/** The lines of one section (`Options:`, `Commands:`) of a help text. */
function section(help: string, name: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${name}:`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Every command below `command`, as its path of names: a command added later is covered too. */
function allCommands(command: Command, at: string[] = []): string[][] {
  return command.commands.flatMap((c) => [[...at, c.name()], ...allCommands(c, [...at, c.name()])]);
}

/** A command's own long flags, hidden ones included. */
function longFlags(command: Command): string[] {
  return command.options.map((o) => o.long).filter((f): f is string => f !== undefined && f !== '--help');
}

function find(program: Command, names: string[]): Command {
  return names.reduce((c, name) => c.commands.find((s) => s.name() === name)!, program);
}

describe('unknown flags and commands are named, with the closest right one', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('the program walked in-process is the one the CLI shows', () => {
    const commands = allCommands(buildProgram());
    expect(commands).toEqual(
      expect.arrayContaining([['run'], ['runs'], ['runs', 'prune'], ['policy', 'check'], ['approver', 'keygen']]),
    );
    const shown = section(gatehouse(['--help']).stdout, 'Commands')
      .map((l) => /^ {2}([a-z][\w-]*)/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined && n !== 'help');
    expect(shown.sort()).toEqual(
      commands
        .filter((c) => c.length === 1)
        .map((c) => c[0])
        .sort(),
    );
    const runFlags = section(gatehouse(['run', '--help']).stdout, 'Options')
      .map((l) => /^ {2}(?:-\w, )?(--[\w-]+)/.exec(l)?.[1])
      .filter((f): f is string => f !== undefined && f !== '--help');
    // Hidden flags (a worker's) are left out of the help; the in-process walk covers them too.
    const run = find(buildProgram(), ['run']);
    expect(runFlags).toEqual(longFlags(run).filter((f) => !run.options.find((o) => o.long === f)?.hidden));
  });

  it('every command names an unknown flag, and a flag one letter off gets the flag it meant', async () => {
    const program = buildProgram();
    const cases: Array<{ args: string[]; flag?: string }> = [];
    for (const command of allCommands(program)) {
      cases.push({ args: [...command, '--zzbogus'] });
      const flags = longFlags(find(program, command));
      for (const flag of flags) {
        // One letter short, unless that is a flag too (--model and --mode): then one letter more.
        const typo = flags.includes(flag.slice(0, -1)) ? `${flag}x` : flag.slice(0, -1);
        cases.push({ args: [...command, typo], flag });
      }
    }
    // Enough to have reached every command's flags (44 commands, ~300 flags when written).
    expect(cases.length).toBeGreaterThan(250);
    for (const c of cases) {
      const r = await cliInProcess(c.args);
      const what = c.args.join(' ');
      expect(r.status, what).toBe(2);
      expect(r.stdout, what).toBe('');
      if (c.flag === undefined) expect(r.stderr, what).toContain("unknown option '--zzbogus'");
      else {
        const typo = c.args.at(-1)!;
        expect(r.stderr, what).toMatch(
          new RegExp(`unknown option '${typo}'[^]*did you mean (one of )?[^]*${c.flag}\\b`, 'i'),
        );
      }
    }
  });

  it.each<[string[], string[]]>([
    // A required option's typo is named, not reported as the option missing.
    [
      ['run', 'fix it', '--modle', 'scripted:x.json'],
      ["error: unknown option '--modle' (did you mean --model or --mode?)", '(gatehouse run --help lists its options)'],
    ],
    [['deny', 'run_x', 'req_y', '--resaon', 'no'], ["error: unknown option '--resaon' (did you mean --reason?)"]],
    // Every unknown flag of a command at once.
    [
      ['policy', 'check', '--tol', 'bash', '--inptu', '{}'],
      [
        "error: unknown option '--tol' (did you mean --tool?)",
        "error: unknown option '--inptu' (did you mean --input?)",
        '(gatehouse policy check --help lists its options)',
      ],
    ],
    [['runs', 'prune', '--dryrun'], ["error: unknown option '--dryrun' (did you mean --dry-run?)"]],
    [['resume', 'r', '--max-turn', '3'], ["error: unknown option '--max-turn' (did you mean --max-turns?)"]],
    [['show', 'r', '--json=yes'], ["error: option '--json' takes no value, got '--json=yes'"]],
    [['show', 'r', '-x'], ["error: unknown option '-x'"]],
    [['run', 'x', '--model', 'm', '--mode', 'confirm-novle'], ['did you mean confirm-novel?']],
    // Unknown commands, at every level, with the closest.
    [['runz'], ["error: unknown command 'runz'", 'Did you mean one of run, runs?']],
    [
      ['policy', 'chek'],
      ["error: unknown command 'chek'", 'Did you mean check?'],
    ],
    [
      ['approver', 'keygn'],
      ["error: unknown command 'keygn'", 'Did you mean keygen?'],
    ],
  ])('%j', (args, expected) => {
    const r = gatehouse(args);
    expect(r.status).toBe(2);
    for (const line of expected) expect(r.stderr).toContain(line);
    expect(r.stdout).toBe('');
  });
});
