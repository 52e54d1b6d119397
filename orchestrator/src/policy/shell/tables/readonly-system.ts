import { spec, type CommandSpec, type OperandEffect } from '../options';
import type { Word } from '../words';

/**
 * The read-only allowlist, part two: tools that show the system, its users, processes and
 * documentation (see tables/readonly.ts for the syntax and the sources of these lists).
 */

/** `date +FORMAT` prints; `date MMDDhhmm[[CC]YY][.ss]` sets the clock. */
function dateOperands(ops: readonly Word[]): OperandEffect | undefined {
  const set = ops.find((o) => !o.literal || !o.value.startsWith('+'));
  return set ? { class: 'privilege', reason: 'date with a time operand sets the clock' } : undefined;
}

/** bash's `history`: printing (or `-p`) only reads; the other options change or write the history. */
const HISTORY = spec('pc+d:+a+n+r+w+s+', '');

export const SYSTEM_TOOL_SPECS: Record<string, CommandSpec> = {
  du: spec(
    '0aAbcDhHklLmPsSxB:d:t:X:',
    `files0-from= null all apparent-size block-size= bytes total
    dereference-args max-depth= summarize human-readable inodes dereference count-links no-dereference
    separate-dirs si threshold= time? time-style= exclude-from= exclude= one-file-system`,
  ),
  df: spec(
    'ahHiklPTvB:t:x:',
    `all block-size= human-readable si inodes local no-sync output? portability sync
    total type= print-type exclude-type=`,
  ),
  free: spec(
    'bkmgtplhvwLs:c:',
    'bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total committed seconds= count= wide line',
  ),
  uptime: spec('psh', 'pretty since'),
  uname: spec(
    'asnrvmpio',
    `all kernel-name nodename kernel-release kernel-version machine processor
    hardware-platform operating-system`,
  ),
  whoami: spec('', ''),
  logname: spec('', ''),
  users: spec('', ''),
  groups: spec('', ''),
  who: spec(
    'abdHlmpqrsTtuw',
    'all boot dead heading login process count runlevel short time mesg users message writable',
  ),
  id: spec('aZgGnruz', 'context group groups name real user zero'),
  date: spec(
    'IRus#d:f:r:I::',
    'date= debug file= iso-8601? resolution rfc-email rfc-3339= reference= set=# universal utc',
    { operands: dateOperands },
  ),
  cal: spec('13bhjJmSvwyY', '', { abbrev: 'exact', numeric: true }),
  locale: spec('acmkv', 'all-locales charmaps category-name keyword-name verbose usage'),
  nproc: spec('', 'all ignore='),
  lscpu: spec(
    'abBcJxyhVs:e::p::C::',
    'all online bytes caches? offline json extended? parse? sysroot= hex physical output-all',
  ),
  getconf: spec('av:', '', { abbrev: 'exact' }),
  tty: spec('s', 'silent quiet'),
  tput: spec('SVxT:', '', { abbrev: 'exact' }),
  clear: spec('VxT:', '', { abbrev: 'exact' }),
  lsof: spec('abhlnNPRtUVwXc:d:g:i:p:s:u:', '', { abbrev: 'exact' }),
  man: spec(
    'aDdfhikKlwWZIc+u+C:!E:H::!L:m:M:p:P:!r:R:S:s:T::t!X::!e:',
    `config-file=! debug default warnings?
    whatis apropos global-apropos local-file where path location where-cat location-cat catman+ recode= locale=
    systems= manpath= sections= extension= ignore-case match-case regex wildcard names-only all update+
    no-subpages pager=! prompt= ascii encoding= no-hyphenation nh no-justification nj preprocessor= troff!
    troff-device?! html?! gxditview?! ditroff! usage`,
  ),
  info: spec('akvwd:f:n:', 'apropos= directory= file= index-search= node= show-options usage vi-keys where all', {
    abbrev: 'exact',
  }),
  apropos: spec(
    'dverwalC:!L:m:M:s:',
    `debug verbose exact regex wildcard and long config-file=! locale= systems=
    manpath= sections= section= usage`,
  ),
  whatis: spec(
    'dvrwlC:!L:m:M:s:',
    `debug verbose regex wildcard long config-file=! locale= systems= manpath=
    sections= section= usage`,
  ),
  history: HISTORY,
  jobs: spec('lnprsx!', '', { abbrev: 'exact' }),
  lsattr: spec('RVadlpv', '', { abbrev: 'exact' }),
  getcap: spec('rvn', '', { abbrev: 'exact' }),
  dmesg: spec(
    'dehHkPrStTuwWxJc#C#D#E#F:f:l:L::n:#s:',
    `clear# read-clear# console-off# console-on# file= facility=
    human json kernel color? level= console-level=# nopager force-prefix raw noescape syslog buffer-size=
    userspace follow follow-new decode show-delta reltime ctime notime time-format= since= until=`,
  ),
};
