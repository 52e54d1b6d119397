import type { CommandSpec, OptionVerdict } from '../options';
import type { Word } from '../words';
import { names } from './family';
import { xxd } from '../xxd';
import { FILE_TOOL_SPECS } from './readonly-files';
import { SYSTEM_TOOL_SPECS } from './readonly-system';

/**
 * The read-only allowlist: for each command the classifier may call read-only, the options that
 * keep it so. Syntax: see `spec` in options.ts (`o:>` is a short option with a value it writes,
 * `compress-program=!` a long one whose value is a program run). Long lists for GNU tools are
 * complete as of Debian 12 (coreutils 9.1, grep 3.8, diffutils 3.8, util-linux 2.38, procps 4),
 * taken from each tool's --help, because abbreviations are decided against them; where a list
 * is not known to be complete the spec says `abbrev: 'exact'`.
 *
 * Compared with Codex (read for this table, not copied; see docs/decisions/0002-git-config-programs.md):
 *  - codex-rs/core/src/command_safety/is_safe_command.rs accepts a fixed set (cat, cut, grep, head,
 *    ls, nl, paste, rev, seq, stat, tail, tr, uniq, wc, which…) with ANY arguments, so `uniq IN OUT`
 *    passes there; here every option and output operand is checked.
 *  - It refuses `find -exec/-execdir/-ok/-okdir/-delete/-fls/-fprint*` (so does wrappers.ts),
 *    `base64 -o/--output` (a BSD option; GNU base64 has none), and `rg --pre`, `--hostname-bin`,
 *    `--search-zip`, `-z` by exact spelling only: `rg -zn` or a cluster passes there, not here.
 *  - For git it allows only status/log/diff/show/branch, refuses any `-c`/`--config-env` and
 *    `--output`, `--ext-diff`, `--textconv`, `--exec`, `--paginate`. Here `-c` with a key that
 *    names no program is allowed, `--paginate` too (no terminal, and core.pager is forced to cat),
 *    and the repository's own config is neutralised by the git wrapper, which Codex does not do.
 *  - Its older execpolicy (codex-rs/execpolicy, tests ls.rs, head.rs) listed allowed flags per
 *    program, as this table does, but as exact words: no clusters, `=` forms or abbreviations.
 *  - Neither has rules for sort, shuf, tree, sdiff, xxd, date -s, less, file, man or dmesg.
 */

/** Commands whose arguments never make them write or run anything (operands, not options). */
export const FREE = new Set(
  names(`
  echo true false : yes sleep expr factor tsort pwd cd pushd popd dirs exit return break continue
  shift times umask ulimit unalias set shopt help printenv env nice nohup timeout time xargs
  command builtin exec stdbuf setsid coproc trap ps pstree pgrep top htop vmstat exa eza type [[
  find`),
);

export const READ_ONLY_SPECS: Record<string, CommandSpec> = { ...FILE_TOOL_SPECS, ...SYSTEM_TOOL_SPECS };

/** Commands whose option syntax the spec language does not cover. */
export const CUSTOM_JUDGES: Record<string, (args: readonly Word[]) => OptionVerdict> = { xxd };

// Debian's names for fd and bat (the classifier resolves them to fd and bat first).
READ_ONLY_SPECS.fdfind = READ_ONLY_SPECS.fd!;
READ_ONLY_SPECS.batcat = READ_ONLY_SPECS.bat!;
