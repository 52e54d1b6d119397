import { hasFlag, operands, readOptions } from './arguments';
import { BUILTINS } from './builtins';
import { judgeOptions, type OptionVerdict } from './options';
import { gofmt, yq } from './query-tools';
import { awk, sed, tar } from './scripted';
import { CUSTOM_JUDGES, FREE, READ_ONLY_SPECS } from './readonly-table';
import type { CommandClass } from './types';
import { git } from './git-command';
import { PHRASE, plain, runTimeWord, v, type Verdict } from './verdict';
import type { Condition } from './variables';
import { short, type Word } from './words';

export { riskyVariable } from './variables';
export type { Verdict } from './verdict';

/**
 * Which class each known command belongs to. This is a judgement, kept in one file so it can be
 * reviewed in one place: a command that is not here is `unknown`, and unknown is asked about.
 * Wrappers (`sudo`, `env`, `xargs`, `bash -c`…) are unwrapped before this table is consulted; see
 * wrappers.ts.
 */

/** Commands whose class does not depend on their arguments (read-only ones: on their options, see readOnly). */
const TABLE: Record<string, CommandClass> = {};

/** The commands of the read-only table, for tests that check each has an option allowlist. */
export function readOnlyCommands(): string[] {
  return Object.keys(TABLE).filter((n) => TABLE[n] === 'read-only');
}
function classes(cls: CommandClass, names: string): void {
  for (const n of names.trim().split(/\s+/)) TABLE[n] = cls;
}

// Builtins that set variables by name or evaluate strings (read, printf, declare, let, hash…) are
// judged in builtins.ts, not here.
classes(
  'read-only',
  `
  ls ll la dir vdir cat tac head tail less more grep egrep fgrep zgrep rg ag wc echo pwd
  true false [[ : stat file which whereis type uniq diff diff3 sdiff cmp comm cut tr jq column
  paste join nl fold fmt expand unexpand rev seq yes sleep basename dirname realpath readlink md5sum
  sha1sum sha224sum sha256sum sha384sum sha512sum shasum b2sum cksum sum base32 base64 basenc xxd
  hexdump od strings du df free uptime uname whoami id groups logname users who date cal printenv locale
  nproc lscpu getconf tty tput clear ps pgrep pstree lsof top htop vmstat tree fd fdfind exa eza bat
  batcat zcat bzcat xzcat cd pushd popd dirs history help man info apropos
  whatis jobs exit return break continue shift times umask ulimit unalias set
  shopt env printenv nice nohup timeout time xargs
  command builtin exec stdbuf setsid coproc trap lsattr getcap numfmt factor expr shuf envsubst
  diffstat colordiff tsort dmesg find sort`,
);
classes(
  'test-build',
  `
  make gmake cmake ctest ninja meson bazel bazelisk mvn mvnw gradle gradlew ant sbt lein tsc jest
  vitest mocha ava tap karma jasmine cypress pytest py.test tox nox mypy pyright pylint flake8
  pycodestyle pydocstyle bandit coverage rspec rake phpunit gcc g++ cc c++ clang clang++ rustc javac
  kotlinc scalac swift swiftc zig esbuild webpack vite rollup parcel turbo nx lerna tsup swc babel
  stylelint tslint standard xo golangci-lint shellcheck hadolint markdownlint configure`,
);
classes(
  'write',
  `
  touch mkdir mkfifo cp mv install ln link patch rename mktemp split csplit sponge dos2unix unix2dos
  zip ssh-keygen fallocate`,
);
classes(
  'destructive',
  `
  rm rmdir unlink shred srm wipe dd truncate wipefs mkfs fdisk sfdisk parted kill pkill killall rimraf`,
);
classes(
  'network',
  `
  curl wget ssh scp sftp rsync nc ncat netcat socat telnet ftp lftp ping ping6 traceroute tracepath
  mtr dig nslookup host whois nmap http https xh aria2c axel mosh sshpass gh hub glab docker
  docker-compose podman kubectl helm terraform aws gcloud gsutil az heroku vercel netlify flyctl fly
  firebase ngrok yum dnf apk brew pacman zypper snap flatpak port conda mamba gem composer svn hg
  sendmail mail mutt`,
);
classes(
  'privilege',
  `
  sudo su doas chown chgrp chroot mount umount setcap nsenter unshare chattr insmod rmmod modprobe
  sysctl iptables ip6tables nft ufw firewall-cmd useradd userdel usermod groupadd groupdel groupmod
  passwd chpasswd chsh newgrp visudo service reboot shutdown halt poweroff setenforce capsh pkexec
  runuser setpriv launchctl at hostnamectl timedatectl losetup swapon swapoff ldconfig dpkg rpm
  mknod setfacl`,
);

/* ---------------------------------------------------------------- JavaScript package managers */

/** npm's options that can come before the subcommand; `true` when they take a value. */
const NPM_GLOBAL: Record<string, boolean> = {
  '--prefix': true,
  '--workspace': true,
  '-w': true,
  '--loglevel': true,
  '--userconfig': true,
  '--registry': true,
  '--cache': true,
  '--color': false,
  '--no-color': false,
  '--workspaces': false,
  '-ws': false,
  '--include-workspace-root': false,
  '--if-present': false,
  '-s': false,
  '--silent': false,
  '-q': false,
  '--quiet': false,
  '-d': false,
  '-dd': false,
  '--verbose': false,
  '-g': false,
  '--global': false,
  '-y': false,
  '--yes': false,
  '--no-audit': false,
  '--no-fund': false,
  '--prefer-offline': false,
  '--offline': false,
  '--no-update-notifier': false,
};

const NPM_SUB: Record<string, CommandClass> = {};
const npmSubs = (cls: CommandClass, names: string) => {
  for (const n of names.trim().split(/\s+/)) NPM_SUB[n] = cls;
};
npmSubs('test-build', 'test t tst run run-script rum urn start restart stop rebuild rb');
npmSubs(
  'network',
  `
  install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install install-clean ic
  update up upgrade udpate install-test it install-ci-test cit publish unpublish deprecate dist-tag
  access owner team org login adduser add-user logout whoami ping search s se find view v info show
  outdated audit doctor dedupe ddp find-dupes create star unstar stars hook token profile repo docs
  bugs home`,
);
npmSubs('write', 'uninstall remove rm r un unlink link ln pack prune shrinkwrap set-script init');
npmSubs(
  'read-only',
  'ls list ll la explain why query root bin prefix help help-search completion fund sbom -v --version -h',
);

function npm(args: readonly Word[]): Verdict {
  let i = 0;
  for (; i < args.length && args[i]!.literal; i++) {
    const [opt, inline] = args[i]!.value.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!(opt in NPM_GLOBAL)) break;
    if (NPM_GLOBAL[opt] && inline === undefined) i++;
  }
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
      return runsTool('npm exec', rest.slice(1), argv);
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
  const cls = NPM_SUB[sub.value];
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
      let i = 1;
      for (; i < words.length && words[i]!.literal; i++) {
        const [opt, inline] = words[i]!.value.split(/=(.*)/s, 2) as [string, string | undefined];
        if (!(opt in NPM_GLOBAL)) break;
        if (NPM_GLOBAL[opt] && inline === undefined) i++;
      }
      const sub = words[i];
      return sub?.literal && (sub.value === 'exec' || sub.value === 'x') ? { label: 'npm exec', next: i + 1 } : null;
    }
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const o = readOptions(words, 1, { short: 'CF', long: ['dir', 'filter', 'cwd'] });
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
function runsTool(via: string, args: readonly Word[], argv: string[]): Verdict {
  const o = readOptions(args, 0, { short: 'pc', long: ['package', 'call'] });
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
  const inner = classifyCommand(name, args.slice(o.next + 1));
  if (inner.class === 'unknown')
    return v('unknown', `${via} ${name}: an unknown package, possibly downloaded and run`, { argv });
  return v(inner.class, `${via} ${name}: ${inner.reason.replace(/^[^:]*: /, '')}`, { argv });
}

const PM_NETWORK = new Set([
  'install',
  'i',
  'add',
  'a',
  'update',
  'up',
  'upgrade',
  'upgrade-interactive',
  'dlx',
  'create',
  'c',
  'publish',
  'login',
  'logout',
  'outdated',
  'audit',
  'info',
  'view',
  'search',
  'fetch',
  'dedupe',
  'import',
  'npm',
  'unplug',
  'global',
  'self-update',
  'setup',
  'env',
  'x',
  'pm',
  'install-test',
  'it',
]);
const PM_WRITE = new Set([
  'remove',
  'rm',
  'uninstall',
  'un',
  'unlink',
  'link',
  'ln',
  'prune',
  'patch',
  'patch-commit',
  'init',
  'pack',
]);
const PM_READ = new Set([
  'list',
  'ls',
  'll',
  'why',
  'root',
  'bin',
  'help',
  '--version',
  '-v',
  '-h',
  '--help',
  'licenses',
  'config',
]);

/** yarn, pnpm and bun: install-like subcommands reach the registry; any other name runs a package.json script. */
function packageManager(name: string, all: readonly Word[]): Verdict {
  // Options before the subcommand (`pnpm -C dir test`, `yarn --cwd dir test`) do not change what runs.
  const o = readOptions(all, 0, { short: 'CF', long: ['dir', 'filter', 'cwd'] });
  if (['--version', '-v', '--help', '-h'].some((f) => o.flags.has(f)))
    return v('read-only', `${name} prints information`);
  const args = all.slice(o.next);
  // `yarn workspace NAME CMD` is CMD in one workspace; `yarn workspaces foreach CMD` runs CMD in each.
  if (name === 'yarn' && args[0]?.literal && args[0].value === 'workspace' && args.length > 2)
    return packageManager(name, args.slice(2));
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
  if (s === 'exec') return runsTool(`${name} exec`, args.slice(1), argv);
  if (PM_NETWORK.has(s)) return v('network', `${name} ${s} reaches the package registry`, { argv });
  if (PM_WRITE.has(s)) return v('write', `${name} ${s}: ${PHRASE.write}`, { argv });
  if (PM_READ.has(s)) return v('read-only', `${name} ${s}: ${PHRASE['read-only']}`, { argv });
  return v('test-build', `${name} ${s} runs a package.json script or project file`, { argv });
}

/* ---------------------------------------------------------------- interpreters */

interface Interpreter {
  /** Options that run code given on the command line. */
  inline: string[];
  /** Options that take a value (so the value is not mistaken for the script). */
  valued: string[];
}

const INTERPRETERS: Record<string, Interpreter> = {
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
const PYTHON_MODULES: Record<string, CommandClass> = {
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

function interpreter(name: string, spec: Interpreter, args: readonly Word[]): Verdict {
  const inline = (o: string) => spec.inline.includes(o);
  const valued = (o: string) => spec.valued.includes(o);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const a = w.value;
    if (!w.literal) return v('unknown', `${name}: the script is only known at run time`);
    if (['-v', '-V', '--version', '-h', '--help'].includes(a)) return v('read-only', `${name} ${a} prints information`);
    if (a === '-') return v('unknown', `${name} reads its program from standard input`);
    if (name === 'node' && a === '--test') return v('test-build', 'node --test runs tests');
    if (name === 'python' && a.startsWith('-m')) {
      const mod = a.length > 2 ? a.slice(2) : (args[i + 1]?.value ?? '');
      if (mod === 'pip') return pip(args.slice(a.length > 2 ? i + 1 : i + 2));
      const cls = PYTHON_MODULES[mod];
      return cls
        ? v(cls, `python -m ${mod}: ${PHRASE[cls]}`)
        : v('unknown', `python -m ${mod}: not a module this classifier knows`);
    }
    if (a.startsWith('--')) {
      const opt = a.split('=')[0]!;
      if (inline(opt)) return v('unknown', `${name} ${opt} runs inline code`);
      if (valued(opt) && !a.includes('=')) i++;
      continue;
    }
    if (a.startsWith('-')) {
      // A cluster such as perl's `-pie` or node's `-pe`: a letter that takes a value ends it.
      for (let k = 1; k < a.length; k++) {
        const o = `-${a[k]!}`;
        if (inline(o)) return v('unknown', `${name} ${o} runs inline code`);
        if (valued(o)) {
          if (k === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    return v('test-build', `${name} runs the project file ${a}`);
  }
  return v('unknown', `${name} without a script reads code from standard input`);
}

function pip(args: readonly Word[]): Verdict {
  const a = args.map((w) => w.value);
  const sub = operands(a)[0];
  switch (sub) {
    case 'install':
    case 'download':
    case 'wheel':
    case 'index':
    case 'search':
      return v('network', `pip ${sub} reaches the package index`);
    case 'uninstall':
      return v('write', 'pip uninstall removes packages');
    case 'list':
    case 'show':
    case 'freeze':
    case 'check':
    case 'inspect':
    case 'help':
    case 'debug':
    case 'hash':
    case undefined:
      return v('read-only', `pip ${sub ?? ''}: ${PHRASE['read-only']}`.replace(' :', ':'));
    case 'config':
    case 'cache':
      return a.includes('list') || a.includes('get') || a.includes('dir') || a.includes('info')
        ? v('read-only', `pip ${sub} reads settings`)
        : v('write', `pip ${sub} changes settings`);
  }
  return v('unknown', `pip ${sub}: not a known pip command`);
}

/* ---------------------------------------------------------------- tools whose arguments matter */

const SUBCOMMANDS: Record<string, Record<string, CommandClass>> = {
  cargo: {
    build: 'test-build',
    b: 'test-build',
    check: 'test-build',
    c: 'test-build',
    test: 'test-build',
    t: 'test-build',
    bench: 'test-build',
    run: 'test-build',
    r: 'test-build',
    doc: 'test-build',
    clippy: 'test-build',
    nextest: 'test-build',
    miri: 'test-build',
    fmt: 'write',
    fix: 'write',
    new: 'write',
    init: 'write',
    remove: 'write',
    rm: 'write',
    clean: 'destructive',
    install: 'network',
    add: 'network',
    fetch: 'network',
    update: 'network',
    publish: 'network',
    search: 'network',
    login: 'network',
    yank: 'network',
    owner: 'network',
    tree: 'read-only',
    metadata: 'read-only',
    version: 'read-only',
    '--version': 'read-only',
    help: 'read-only',
    'locate-project': 'read-only',
    pkgid: 'read-only',
  },
  go: {
    build: 'test-build',
    test: 'test-build',
    vet: 'test-build',
    run: 'test-build',
    generate: 'test-build',
    tool: 'test-build',
    fmt: 'write',
    fix: 'write',
    work: 'write',
    clean: 'destructive',
    get: 'network',
    install: 'network',
    mod: 'network',
    version: 'read-only',
    env: 'read-only',
    list: 'read-only',
    doc: 'read-only',
    help: 'read-only',
  },
  dotnet: {
    build: 'test-build',
    test: 'test-build',
    run: 'test-build',
    format: 'write',
    new: 'write',
    clean: 'destructive',
    restore: 'network',
    add: 'network',
    tool: 'network',
    publish: 'test-build',
    pack: 'test-build',
    '--info': 'read-only',
    '--version': 'read-only',
  },
  bundle: {
    exec: 'test-build',
    install: 'network',
    update: 'network',
    add: 'network',
    list: 'read-only',
    show: 'read-only',
    check: 'read-only',
  },
  uv: {
    run: 'test-build',
    sync: 'network',
    add: 'network',
    lock: 'network',
    pip: 'network',
    tool: 'network',
    venv: 'write',
    remove: 'write',
    tree: 'read-only',
    version: 'read-only',
  },
  apt: {
    list: 'read-only',
    search: 'read-only',
    show: 'read-only',
    policy: 'read-only',
    depends: 'read-only',
    rdepends: 'read-only',
    remove: 'destructive',
    purge: 'destructive',
    autoremove: 'destructive',
  },
  systemctl: {
    status: 'read-only',
    show: 'read-only',
    cat: 'read-only',
    'list-units': 'read-only',
    'list-unit-files': 'read-only',
    'is-active': 'read-only',
    'is-enabled': 'read-only',
    'is-failed': 'read-only',
  },
  playwright: {
    test: 'test-build',
    install: 'network',
    'install-deps': 'privilege',
    'show-report': 'read-only',
    codegen: 'network',
  },
};
/** What a tool in SUBCOMMANDS does with a subcommand it does not list. */
const SUBCOMMAND_DEFAULT: Record<string, CommandClass> = {
  cargo: 'unknown',
  go: 'unknown',
  dotnet: 'unknown',
  bundle: 'unknown',
  uv: 'unknown',
  apt: 'network',
  systemctl: 'privilege',
  playwright: 'unknown',
};
const ALIASES: Record<string, string> = {
  'apt-get': 'apt',
  aptitude: 'apt',
  gsed: 'sed',
  gawk: 'awk',
  mawk: 'awk',
  nawk: 'awk',
  nodejs: 'node',
  bunzip2: 'gzip',
  gunzip: 'gzip',
  bzip2: 'gzip',
  xz: 'gzip',
  unxz: 'gzip',
  zstd: 'gzip',
  unzstd: 'gzip',
  pip3: 'pip',
  pipx: 'pip',
  fdfind: 'fd',
  batcat: 'bat',
  python3: 'python',
  python2: 'python',
  pypy: 'python',
  pypy3: 'python',
  'py.test': 'pytest',
};

/** Tools with a write or fix switch: class without it, class with it, and the switches. */
const FIXERS: Record<string, [CommandClass, CommandClass, string, string[]]> = {
  // prettier loads the project's config, which may be JavaScript (prettier.config.js): project code.
  prettier: ['test-build', 'write', 'w', ['--write']],
  eslint: ['test-build', 'write', '', ['--fix']],
  biome: ['test-build', 'write', '', ['--write', '--apply', '--fix']],
  rubocop: ['test-build', 'write', 'aA', ['--autocorrect', '--autocorrect-all']],
};
/** Tools that write unless told only to check: the short and long check switches. */
const CHECKERS: Record<string, [string, string[]]> = {
  black: ['', ['--check', '--diff']],
  isort: ['c', ['--check', '--check-only', '--diff']],
  rustfmt: ['', ['--check']],
};

/** Commands whose class depends on their arguments: (argument words, their values, the name as typed). */
const SPECIAL: Record<string, (args: readonly Word[], a: string[], typed: string) => Verdict> = {
  git: (args) => git(args),
  npm: (args) => npm(args),
  npx: (args) => runsTool('npx', args, ['npx', ...args.map((w) => w.value)]),
  bunx: (args) => runsTool('bunx', args, ['bunx', ...args.map((w) => w.value)]),
  yarn: (args) => packageManager('yarn', args),
  pnpm: (args) => packageManager('pnpm', args),
  bun: (args) =>
    args[0]?.literal && /[./]/.test(args[0].value)
      ? v('test-build', `bun runs the project file ${args[0].value}`)
      : packageManager('bun', args),
  pip: (args) => pip(args),
  deno: (_, a) =>
    a[0] === 'eval'
      ? v('unknown', 'deno eval runs inline code')
      : ['install', 'add', 'upgrade'].includes(a[0] ?? '')
        ? v('network', `deno ${a[0]} reaches the registry`)
        : v('test-build', `deno ${a[0] ?? ''} runs project code`.trim()),
  sed: (args, _, typed) => fromOptions(typed, sed(args)),
  awk: (args, _, typed) => fromOptions(typed, awk(args)),
  tee: (_, a) =>
    operands(a).some((f) => !DEV_SINKS.has(f)) ? v('write', 'tee writes files') : v('read-only', 'tee only prints'),
  chmod: (_, a) => {
    const mode = operands(a)[0] ?? '';
    return /s/.test(mode) || /^[2-7][0-7]{3}$/.test(mode)
      ? v('privilege', 'chmod sets a setuid/setgid bit')
      : v('write', 'chmod changes permissions');
  },
  tar: (args, _, typed) => fromOptions(typed, tar(args)),
  gzip: (_, a, typed) =>
    hasFlag(a, 'clt', '--stdout', '--to-stdout', '--list', '--test')
      ? v('read-only', `${typed} -c only prints`)
      : v('write', `${typed} replaces files with (de)compressed ones`),
  unzip: (_, a) =>
    hasFlag(a, 'lvtZp') ? v('read-only', 'unzip -l lists an archive') : v('write', 'unzip extracts files'),
  crontab: (_, a) =>
    hasFlag(a, 'l') ? v('read-only', 'crontab -l lists jobs') : v('privilege', 'crontab schedules commands'),
  // `hostname -F FILE` and `hostname -b NAME` set the name too; only these options print.
  hostname: (_, a) =>
    operands(a).length ||
    a.some(
      (x) =>
        !/^(-[sfdiIaAyn]+|--(short|fqdn|long|domain|ip-addresses?|all-ip-addresses|alias|all-fqdns|nis|yp|node|help|version))$/.test(
          x,
        ),
    )
      ? v('privilege', 'hostname with an operand or option other than printing ones changes the host name')
      : v('read-only', 'hostname prints the host name'),
  gofmt: (args) => v(...gofmt(args)),
  yq: (args) => v(...yq(args)),
  // ack reads options, --pager among them, from a .ackrc the project can ship.
  ack: () => v('unknown', "ack reads options (such as --pager) from the project's .ackrc"),
  source: () =>
    v('unknown', 'source runs a script file in this shell', {
      problem: 'source runs a script file whose commands cannot be seen',
    }),
  '.': () =>
    v('unknown', '. runs a script file in this shell', {
      problem: '. runs a script file whose commands cannot be seen',
    }),
  make: (args, _, typed) => make(typed, args),
  gmake: (args, _, typed) => make(typed, args),
  ruff: (_, a) =>
    (a[0] === 'format' && !hasFlag(a, '', '--check', '--diff')) || hasFlag(a, '', '--fix')
      ? v('write', 'ruff rewrites files')
      : v('test-build', 'ruff lints'),
};

/** Makefiles read from standard input: their recipes cannot be seen. */
const STDIN_FILES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/**
 * make runs the project's Makefile (test-build). `make -f -` (or /dev/stdin) reads recipes from
 * standard input and `--eval` takes them from the command line: shell commands the line hides.
 */
function make(typed: string, args: readonly Word[]): Verdict {
  const problem = (p: string) => v('unknown', p, { problem: p });
  const conditions: Condition[] = [];
  const file = (w: Word | undefined) => {
    if (w && !w.literal) return problem(`${typed} -f ${short(w.value)}: the makefile is only known at run time`);
    if (w && STDIN_FILES.has(w.value))
      return problem(`${typed} -f ${w.value} reads a makefile from standard input, whose recipes cannot be seen`);
    return undefined;
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const a = w.value;
    if (!w.literal) {
      if (!/^[$`]/.test(a)) continue;
      const r = runTimeWord(w, `${typed} ${short(a)}: an argument only known at run time could be -f - or --eval`);
      if (r.problem) return problem(r.problem);
      conditions.push(...(r.conditions ?? []));
      continue;
    }
    if (a === '--') break;
    if (a.startsWith('--eval')) return problem(`${typed} --eval runs recipes given on the command line`);
    const long = /^--(file|makefile)(=(.*))?$/s.exec(a);
    if (long) {
      const bad = file(long[2] !== undefined ? { ...w, value: long[3]!, pattern: '' } : args[++i]);
      if (bad) return bad;
      continue;
    }
    if (!/^-[^-]/.test(a)) continue;
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      if (c === 'E') return problem(`${typed} -E runs recipes given on the command line`);
      if (c === 'f') {
        const bad = file(k + 1 < a.length ? { ...w, value: a.slice(k + 1), pattern: '' } : args[++i]);
        if (bad) return bad;
        break;
      }
      if ('CIoW'.includes(c)) {
        if (k === a.length - 1) i++;
        break;
      }
    }
  }
  return { ...plain(typed, 'test-build'), ...(conditions.length ? { conditions } : {}) };
}

/** Options that make an ordinary tool run another program (`tar --to-command=sh`, `sort --compress-program=x`). */
const RUNS_PROGRAM: Record<string, string[]> = {
  tar: [
    '--to-command',
    '--checkpoint-action',
    '--use-compress-program',
    '-I',
    '--info-script',
    '-F',
    '--new-volume-script',
    '--rsh-command',
    '--rmt-command',
  ],
  sort: ['--compress-program'],
  zip: ['-TT', '--unzip-command'],
  man: ['-P', '--pager', '-H', '--html'],
  split: ['--filter'],
  install: ['--strip-program'],
  rg: ['--pre'],
  fd: ['-x', '--exec', '-X', '--exec-batch'],
  bat: ['--pager'],
  sdiff: ['--diff-program'],
  diff3: ['--diff-program'],
};

/** Writes to these are not writes to files. */
export const DEV_SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/fd/1', '/dev/fd/2']);

/**
 * The class of one command, given its name (already a basename, quotes removed) and its
 * arguments. Wrappers have been unwrapped by the caller.
 */
export function classifyCommand(typed: string, args: readonly Word[]): Verdict {
  const base = typed.replace(/^(python|pip)[\d.]+$/, '$1').replace(/^mkfs\..*$/, 'mkfs');
  const name = ALIASES[base] ?? base;
  const a = args.map((w) => w.value);
  const runs = RUNS_PROGRAM[name]?.find((o) => a.some((x) => x === o || x.startsWith(o.length === 2 ? o : `${o}=`)));
  if (runs) return v('unknown', `${typed} ${runs} runs another program`);
  const builtin = BUILTINS[name];
  if (builtin) return builtin(args, typed);
  const special = SPECIAL[name];
  if (special) return special(args, a, typed);
  const interp = INTERPRETERS[name];
  if (interp) return interpreter(name, interp, args);
  const table = SUBCOMMANDS[name];
  if (table) {
    const sub = a.find((x) => !/^[-+]/.test(x)) ?? a[0] ?? '';
    const cls = table[sub] ?? SUBCOMMAND_DEFAULT[name]!;
    return v(
      cls,
      `${typed} ${sub}: ${cls === 'unknown' ? 'not a subcommand this classifier knows' : PHRASE[cls]}`.replace(
        / :/,
        ':',
      ),
    );
  }
  const fixer = FIXERS[name];
  if (fixer)
    return hasFlag(a, fixer[2], ...fixer[3])
      ? v(fixer[1], `${typed} ${fixer[3][0] ?? '-' + fixer[2][0]} rewrites files`)
      : plain(typed, fixer[0]);
  const checks = CHECKERS[name];
  if (checks)
    return hasFlag(a, checks[0], ...checks[1])
      ? v('test-build', `${typed} only checks`)
      : v('write', `${typed} rewrites files`);
  const cls = TABLE[name];
  if (cls === 'read-only') return readOnly(name, typed, args);
  return cls ? plain(typed, cls) : plain(typed, 'unknown');
}

/**
 * A command of the read-only table is read-only only with options known to be read-only
 * (readonly-table.ts); any other option gives it that option's class, an unknown one `unknown`.
 */
function readOnly(name: string, typed: string, args: readonly Word[]): Verdict {
  if (FREE.has(name)) return plain(typed, 'read-only');
  const spec = READ_ONLY_SPECS[name];
  const custom = CUSTOM_JUDGES[name];
  if (!spec && !custom) return v('unknown', `${typed}: no read-only options are listed for it`);
  return fromOptions(typed, custom ? custom(args) : judgeOptions(typed, spec!, args));
}

/** The verdict an option judgement gives (readonly-table.ts, scripted.ts). */
function fromOptions(typed: string, o: OptionVerdict): Verdict {
  const extra: Partial<Verdict> = {
    ...(o.writes.length ? { writes: o.writes } : {}),
    ...(o.conditions.length ? { conditions: o.conditions } : {}),
  };
  if (o.class === 'read-only') return { ...plain(typed, 'read-only'), ...extra };
  return v(o.class, o.reason ?? `${typed}: ${PHRASE[o.class]}`, extra);
}
