import { execFile, execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });

/** The CLI run without waiting on it, so many can run at once (each start is most of the cost). */
const gatehouseAsync = (args: string[]): Promise<{ status: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 }, (e, stdout, stderr) =>
      resolve({ status: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr }),
    );
  });

/** Runs every task, at most `limit` at a time, keeping their order. */
async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const out: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < tasks.length; i = next++) out[i] = await tasks[i]!();
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

/** The lines of one section (`Options:`, `Commands:`) of a help text. */
function section(help: string, name: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${name}:`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Every command, as its path of names, read from the help texts: a command added later is covered too. */
function allCommands(at: string[] = []): string[][] {
  const help = gatehouse([...at, '--help']).stdout;
  const subs = section(help, 'Commands')
    .map((l) => /^ {2}([a-z][\w-]*)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined && n !== 'help');
  return [...(at.length ? [at] : []), ...subs.flatMap((s) => allCommands([...at, s]))];
}

function longFlags(command: string[]): string[] {
  return section(gatehouse([...command, '--help']).stdout, 'Options')
    .map((l) => /^ {2}(?:-\w, )?(--[\w-]+)/.exec(l)?.[1])
    .filter((f): f is string => f !== undefined && f !== '--help');
}

describe('unknown flags and commands are named, with the closest right one', () => {
  let commands: string[][];
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
    commands = allCommands();
  });

  it('finds the commands (the help texts are read right)', () => {
    expect(commands).toEqual(
      expect.arrayContaining([['run'], ['runs'], ['runs', 'prune'], ['policy', 'check'], ['approver', 'keygen']]),
    );
  });

  it(
    'every command names an unknown flag (exit 2), and a flag one letter off gets the flag it meant',
    // One CLI process per case (several hundred): ~0.3 s each on an idle machine, ~2 s at a load of 15.
    { timeout: 600_000 },
    async () => {
      const cases: Array<{ args: string[]; flag?: string }> = [];
      for (const command of commands) {
        cases.push({ args: [...command, '--zzbogus'] });
        const flags = longFlags(command);
        for (const flag of flags) {
          // One letter short, unless that is a flag too (--model and --mode): then one letter more.
          const typo = flags.includes(flag.slice(0, -1)) ? `${flag}x` : flag.slice(0, -1);
          cases.push({ args: [...command, typo], flag });
        }
      }
      const results = await pool(
        cases.map((c) => () => gatehouseAsync(c.args)),
        4,
      );
      for (const [i, c] of cases.entries()) {
        const r = results[i]!;
        const what = c.args.join(' ');
        expect(r.status, what).toBe(2);
        if (c.flag === undefined) {
          expect(r.stderr, what).toContain("unknown option '--zzbogus'");
          expect(r.stdout, what).toBe('');
        } else {
          const typo = c.args.at(-1)!;
          expect(r.stderr, what).toMatch(
            new RegExp(`unknown option '${typo}'[^]*did you mean (one of )?[^]*${c.flag}\\b`, 'i'),
          );
        }
      }
    },
  );

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
