import { spec, type CommandSpec } from '../options';
import { names, type Example } from './family';

/**
 * Commands that run other commands, and how their options are spelled: which take a value decides
 * where the command they run starts (`timeout -s KILL 5 git push` runs `git push`). Lists are the
 * tools' own --help (coreutils 9.1, findutils 4.9, util-linux 2.38, procps 4, sudo 1.9, bash 5.2);
 * `abbrev: 'gnu'` where the tool takes GNU abbreviations of long options (`sudo --us root`).
 * The code that reads these is wrappers.ts.
 */

export const SHELLS = new Set(names('sh bash dash zsh ksh mksh ash fish rbash'));

/** Wrappers of the form `NAME [options] command…`, with their options. */
export const PREFIX: Record<string, CommandSpec> = {
  nice: spec('n:', 'adjustment='),
  nohup: spec('', ''),
  stdbuf: spec('i:o:e:', 'input= output= error='),
  builtin: spec('', '', { abbrev: 'exact' }),
  coproc: spec('', '', { abbrev: 'exact' }),
  setsid: spec('cfw', 'ctty fork wait'),
  // util-linux's getopt string is `+n:c:p:P:u:tVh`: `-t` (--ignore) is a flag, so in
  // `ionice -t rm ls` the command is `rm ls`, not `ls`.
  ionice: spec('c:n:p:P:u:tVh', 'class= classdata= pid= pgid= ignore uid='),
  exec: spec('cla:', '', { abbrev: 'exact' }),
  busybox: spec('', '', { abbrev: 'exact' }),
};

/**
 * GNU env, xargs and time (their --help): read with the GNU rules, so `env --sp=…` is
 * `--split-string` and `xargs --repl` is `--replace`.
 */
export const ENV = spec(
  'i0vu:C:S:a:',
  `ignore-environment null unset= chdir= split-string= block-signal? default-signal?
  ignore-signal? list-signal-handling debug argv0=`,
);
export const XARGS = spec(
  '0prtxoa:d:E:I:L:n:P:s:e::i::l::',
  `null arg-file= delimiter= eof? replace? max-lines? max-args=
  open-tty interactive max-chars= show-limits verbose exit max-procs= process-slot-var= no-run-if-empty`,
);
export const TIME = spec('pavqf:o:', 'format= portability output= append verbose quiet');
export const TIMEOUT = spec('fpvk:s:', 'foreground kill-after= preserve-status signal= verbose');
/** bash's `command [-pVv] NAME…`. */
export const COMMAND = spec('pvV', '', { abbrev: 'exact' });
/**
 * sudo: `-h` (optional host, attached only) is read as a flag, and `-a`/`-c` (BSD auth type and
 * login class) as unknown letters, as they always have been here.
 */
export const SUDO = spec(
  'AbBeEHhiKklNnPSsVvC:D:g:p:R:r:T:t:U:u:',
  `askpass background bell close-from= chdir= preserve-env? edit group= set-home help host= login
  remove-timestamp reset-timestamp list no-update non-interactive preserve-groups prompt= chroot= role= stdin
  shell command-timeout= type= other-user= user= version validate`,
);
/**
 * OpenBSD doas takes no long options; `--login` and `--shell` are listed so that they read as
 * sudo's do (a shell from standard input), as they always have here: doas refuses them anyway.
 */
export const DOAS = spec('Lnsu:C:', 'login shell', { abbrev: 'exact' });
export const WATCH = spec(
  'bcCdeghprtwxvn:q:',
  'beep color no-color differences? errexit chgexit interval= precise equexit= no-rerun no-title no-wrap exec',
);

/** Names `unwrap` knows as running another command (a package runner launching one is followed). */
export const WRAPPERS = new Set([
  ...Object.keys(PREFIX),
  ...SHELLS,
  ...names('env timeout time command xargs find sudo doas su eval alias trap watch npx pnpx bunx npm pnpm yarn bun'),
]);

export const WRAPPER_EXAMPLES: Example[] = [
  ['timeout 5 git push', 'network'],
  ['timeout -s KILL 5 ls', 'read-only'],
  ['nice -n 5 rm -rf x', 'destructive'],
  ['env A=1 ls', 'read-only'],
  ['env -S "rm -rf x"', 'destructive'],
  ['xargs rm', 'destructive'],
  ['sudo -u root ls', 'privilege'],
  ['bash -c "git status"', 'read-only'],
  ['sh deploy.sh', 'unknown'],
  ['find . -exec rm {} +', 'destructive'],
  ['watch -n 1 git status', 'read-only'],
  ['npx env rm -rf x', 'unknown'],
];
