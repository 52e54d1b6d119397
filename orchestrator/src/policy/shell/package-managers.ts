import { operands } from './arguments';
import { lookup } from './tables/family';
import { readOptions } from './read-options';
import {
  NPM_GLOBAL_OPTIONS as NPM_GLOBAL,
  NPM_SUBCOMMANDS,
  PIP_SETTINGS,
  PIP_SETTINGS_READ,
  PIP_SUBCOMMANDS,
  PM_NETWORK,
  PM_OPTIONS,
  PM_READ,
  PM_WRITE,
  RUNNER_OPTIONS,
} from './tables/package-managers';
import { PHRASE, v, type Classify, type Judge, type Verdict } from './verdict';
import { short, type Word } from './words';

/**
 * npm, yarn, pnpm, bun, deno and pip: the subcommand decides (tables/package-managers.ts), and a
 * package runner (`npx TOOL`) is as risky as the TOOL it runs, classified by the caller's classifier.
 */

/** Index of the first word from `from` on that is not one of npm's global options (`--prefix DIR`). */
function afterNpmOptions(words: readonly Word[], from: number): number {
  let i = from;
  for (; i < words.length && words[i]!.literal; i++) {
    const [opt, inline] = words[i]!.value.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!Object.hasOwn(NPM_GLOBAL, opt)) break;
    if (NPM_GLOBAL[opt] && inline === undefined) i++;
  }
  return i;
}

function npm(args: readonly Word[], classify: Classify): Verdict {
  const i = afterNpmOptions(args, 0);
  const rest = args.slice(i);
  const argv = ['npm', ...rest.map((w) => w.value)];
  const sub = rest[0];
  if (!sub) return v('read-only', 'npm without a subcommand prints help', { argv });
  if (!sub.literal)
    return v('unknown', 'the npm subcommand is only known at run time', {
      argv,
      problem: `npm ${short(sub.value)}: the subcommand is only known at run time`,
    });
  const a = argv.slice(2);
  switch (sub.value) {
    case 'exec':
    case 'x':
      return runsTool('npm exec', rest.slice(1), argv, classify);
    case 'version':
      return v(
        operands(a).length ? 'write' : 'read-only',
        operands(a).length ? 'npm version bumps the version' : 'npm version prints versions',
        { argv },
      );
    case 'init':
    case 'create':
      return v(
        operands(a).length ? 'network' : 'write',
        operands(a).length ? `npm ${sub.value} runs a downloaded initialiser` : 'npm init writes package.json',
        { argv },
      );
    case 'config':
    case 'c':
    case 'pkg':
      return v(
        ['get', 'list', 'ls'].includes(a[0] ?? 'list') ? 'read-only' : 'write',
        `npm ${sub.value} ${a[0] ?? ''}`.trim(),
        { argv },
      );
    case 'cache':
      return v(
        a[0] === 'clean' ? 'destructive' : a[0] === 'add' ? 'network' : 'read-only',
        `npm cache ${a[0] ?? ''}`.trim(),
        { argv },
      );
  }
  const cls = lookup(NPM_SUBCOMMANDS, sub.value);
  const reason =
    cls === 'test-build'
      ? `npm ${sub.value} runs a package.json script`
      : cls
        ? `npm ${sub.value}: ${PHRASE[cls]}`
        : `npm ${sub.value}: not a known npm command`;
  return v(cls ?? 'unknown', reason, { argv });
}

/**
 * Package runners (`npx TOOL`, `npm exec TOOL`, `pnpm exec|dlx TOOL`, `yarn exec|dlx TOOL`, `bunx
 * TOOL`, `bun x TOOL`): a label and where TOOL's words start, or null when `words` is not one. The
 * wrapper table uses this to follow a TOOL that runs another command (`npx env rm -rf x`).
 */
export function launcher(name: string, words: readonly Word[]): { label: string; next: number } | null {
  switch (name) {
    case 'npx':
    case 'pnpx':
    case 'bunx':
      return { label: name, next: 1 };
    case 'npm': {
      const i = afterNpmOptions(words, 1);
      const sub = words[i];
      return sub?.literal && (sub.value === 'exec' || sub.value === 'x') ? { label: 'npm exec', next: i + 1 } : null;
    }
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const o = readOptions(words, 1, PM_OPTIONS);
      // `yarn workspace NAME exec …` runs in one workspace.
      const at =
        name === 'yarn' && words[o.next]?.literal && words[o.next]!.value === 'workspace' ? o.next + 2 : o.next;
      const sub = words[at];
      const subs = name === 'bun' ? ['x'] : ['exec', 'dlx'];
      return sub?.literal && subs.includes(sub.value) ? { label: `${name} ${sub.value}`, next: at + 1 } : null;
    }
  }
  return null;
}

/** `npx tool args`: as risky as the tool, and unknown when the tool is not one this table knows. */
function runsTool(via: string, args: readonly Word[], argv: string[], classify: Classify): Verdict {
  const o = readOptions(args, 0, RUNNER_OPTIONS);
  if (o.values.has('-c') || o.values.has('--call')) return v('unknown', `${via} -c runs a shell string`, { argv });
  const tool = args[o.next];
  if (!tool) return v('read-only', `${via} without a tool`, { argv });
  if (!tool.literal)
    return v('unknown', `${via}: the tool is only known at run time`, {
      argv,
      problem: `${via} ${short(tool.value)}: the tool is only known at run time`,
    });
  // `@scope/pkg@1.2` runs the bin named after the package.
  const name = tool.value.replace(/^@[^/]+\//, '').replace(/@[^@]*$/, '');
  const inner = classify(name, args.slice(o.next + 1));
  if (inner.class === 'unknown')
    return v('unknown', `${via} ${name}: an unknown package, possibly downloaded and run`, { argv });
  return v(inner.class, `${via} ${name}: ${inner.reason.replace(/^[^:]*: /, '')}`, { argv });
}

/** yarn, pnpm and bun: install-like subcommands reach the registry; any other name runs a package.json script. */
function packageManager(name: string, all: readonly Word[], classify: Classify): Verdict {
  // Options before the subcommand (`pnpm -C dir test`, `yarn --cwd dir test`) do not change what runs.
  const o = readOptions(all, 0, PM_OPTIONS);
  if (['--version', '-v', '--help', '-h'].some((f) => o.flags.has(f)))
    return v('read-only', `${name} prints information`);
  const args = all.slice(o.next);
  // `yarn workspace NAME CMD` is CMD in one workspace; `yarn workspaces foreach CMD` runs CMD in each.
  if (name === 'yarn' && args[0]?.literal && args[0].value === 'workspace' && args.length > 2)
    return packageManager(name, args.slice(2), classify);
  if (name === 'yarn' && args[0]?.literal && args[0].value === 'workspaces' && args[1]?.value === 'foreach')
    return v('unknown', 'yarn workspaces foreach runs a command in every workspace');
  const argv = [name, ...args.map((w) => w.value)];
  const sub = args[0];
  if (!sub)
    return name === 'bun'
      ? v('read-only', 'bun prints help', { argv })
      : v('network', `${name} installs dependencies`, { argv });
  if (!sub.literal)
    return v('unknown', `the ${name} subcommand is only known at run time`, {
      argv,
      problem: `${name} ${short(sub.value)}: the subcommand is only known at run time`,
    });
  const s = sub.value;
  if (s === 'exec') return runsTool(`${name} exec`, args.slice(1), argv, classify);
  if (PM_NETWORK.has(s)) return v('network', `${name} ${s} reaches the package registry`, { argv });
  if (PM_WRITE.has(s)) return v('write', `${name} ${s}: ${PHRASE.write}`, { argv });
  if (PM_READ.has(s)) return v('read-only', `${name} ${s}: ${PHRASE['read-only']}`, { argv });
  return v('test-build', `${name} ${s} runs a package.json script or project file`, { argv });
}

/** `pip ARGS…` (also `python -m pip`): by subcommand. */
export function pip(args: readonly Word[]): Verdict {
  const a = args.map((w) => w.value);
  const sub = operands(a)[0];
  const cls = sub === undefined ? 'read-only' : lookup(PIP_SUBCOMMANDS, sub);
  if (cls === 'network') return v('network', `pip ${sub} reaches the package index`);
  if (cls === 'write') return v('write', `pip ${sub} removes packages`);
  if (cls === 'read-only') return v('read-only', `pip ${sub ?? ''}: ${PHRASE['read-only']}`.replace(' :', ':'));
  if (sub !== undefined && PIP_SETTINGS.has(sub))
    return PIP_SETTINGS_READ.some((w) => a.includes(w))
      ? v('read-only', `pip ${sub} reads settings`)
      : v('write', `pip ${sub} changes settings`);
  return v('unknown', `pip ${sub}: not a known pip command`);
}

/** The judges of this family, by command name. */
export const PACKAGE_MANAGER_JUDGES: Record<string, Judge> = {
  npm: (args, _, classify) => npm(args, classify),
  npx: (args, _, classify) => runsTool('npx', args, ['npx', ...args.map((w) => w.value)], classify),
  bunx: (args, _, classify) => runsTool('bunx', args, ['bunx', ...args.map((w) => w.value)], classify),
  yarn: (args, _, classify) => packageManager('yarn', args, classify),
  pnpm: (args, _, classify) => packageManager('pnpm', args, classify),
  bun: (args, _, classify) =>
    args[0]?.literal && /[./]/.test(args[0].value)
      ? v('test-build', `bun runs the project file ${args[0].value}`)
      : packageManager('bun', args, classify),
  pip: (args) => pip(args),
  deno: (args) => {
    const a = args.map((w) => w.value);
    return a[0] === 'eval'
      ? v('unknown', 'deno eval runs inline code')
      : ['install', 'add', 'upgrade'].includes(a[0] ?? '')
        ? v('network', `deno ${a[0]} reaches the registry`)
        : v('test-build', `deno ${a[0] ?? ''} runs project code`.trim());
  },
};
