import { awkEffects, sedEffects } from './arguments';
import { judgeOptions, spec, worse, type GivenOption, type OptionVerdict } from './options';
import type { CommandClass } from './types';
import { short, type Word } from './words';

/**
 * sed, awk and tar: commands that are read-only only with some options and, for sed and awk, only
 * with a program that neither runs commands nor writes files. Their options are read with the same
 * GNU rules as the read-only table (options.ts), against each tool's full option list, so that an
 * abbreviation (`sed --in` is `--in-place`, `tar --use-comp=x`, `gawk --so=PROG`) is what the tool
 * takes it to be; an option not in the list, or one that abbreviates more than one, is unknown.
 */

/** GNU sed 4.9 (`sed --help`); sed permutes, so options may follow the operands. */
const SED = spec(
  'nrEsuzbe:f:!i::+l:',
  `expression= file=! in-place?+ line-length= null-data zero-terminated debug
  follow-symlinks posix quiet silent regexp-extended sandbox separate unbuffered binary`,
);

/**
 * gawk 5 (`gawk --usage`; also what mawk and busybox awk accept, which are fewer). Options end at the
 * program. Writers: -d/--dump-variables, -o/--pretty-print, -p/--profile (each to a default file when
 * no name is given). -l/--load loads native code, -f/-E/-i read program text the scan never sees,
 * -D starts the debugger, and -W passes any long option by name (mawk's `-W exec`, `-W dump`).
 */
const AWK = spec(
  'bcCghkMNnOPrsStVIF:v:e:f:!E:!i:l:!L::d::>o::>p::>D::!W:!',
  `field-separator= assign=
  characters-as-bytes traditional copyright dump-variables?> debug?! source= file=! exec=! gen-pot include= csv
  load=! lint? bignum use-lc-numeric non-decimal-data pretty-print?> optimize profile?> posix re-interval
  no-optimize sandbox lint-old trace`,
  { stopAtOperand: true },
);

/** GNU tar 1.34 (`tar --help`): the options that write, run programs or prompt are marked. */
const TAR = spec(
  'AcdrtuxGnkUWOmpsM!BiaojJzZhPRSvwlC:f:F:!L:b:H:V:I:!K:N:T:X:g:>',
  `absolute-names acls
  add-file= after-date= anchored append atime-preserve? auto-compress backup? block-number blocking-factor= bzip2
  catenate check-device check-links checkpoint-action=! checkpoint? clamp-mtime compare compress concatenate
  confirmation create delay-directory-restore delete dereference diff directory= exclude-backups exclude-caches
  exclude-caches-all exclude-caches-under exclude-from= exclude-ignore-recursive= exclude-ignore= exclude-tag-all=
  exclude-tag-under= exclude-tag= exclude-vcs exclude-vcs-ignores exclude= extract file= files-from=
  force-local format= full-time get group-map= group= gunzip gzip hard-dereference ignore-case
  ignore-command-error ignore-failed-read ignore-zeros incremental index-file=> info-script=! interactive
  keep-directory-symlink keep-newer-files keep-old-files label= level= list listed-incremental=> lzip lzma lzop
  mode= mtime= multi-volume! new-volume-script=! newer-mtime= newer= no-acls no-anchored no-auto-compress
  no-check-device no-delay-directory-restore no-ignore-case no-ignore-command-error no-null no-overwrite-dir
  no-quote-chars= no-recursion no-same-owner no-same-permissions no-seek no-selinux no-unquote
  no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner occurrence?
  old-archive one-file-system one-top-level? overwrite overwrite-dir owner-map= owner= pax-option= portability
  posix preserve-order preserve-permissions quote-chars= quoting-style= read-full-records record-size=
  recursion recursive-unlink+ remove-files+ restrict rmt-command=! rsh-command=! same-order same-owner
  same-permissions seek selinux show-defaults show-omitted-dirs show-snapshot-field-ranges show-stored-names
  show-transformed-names skip-old-files sort= sparse sparse-version= starting-file= strip-components= suffix=
  tape-length= test-label to-command=! to-stdout totals? touch transform= uncompress ungzip unlink-first unquote
  update usage use-compress-program=! utc verbatim-files-from verbose verify volno-file=> warning= wildcards
  wildcards-match-slash xattrs xattrs-exclude= xattrs-include= xform= xz zstd`,
);

const has = (given: readonly GivenOption[], ...names: string[]) => given.some((g) => names.includes(g.name));
const valuesOf = (given: readonly GivenOption[], ...names: string[]) =>
  given.filter((g) => names.includes(g.name) && g.value).map((g) => g.value!);

function verdict(cls: CommandClass, reason: string | undefined, base: OptionVerdict): OptionVerdict {
  return { ...base, class: cls, ...(reason ? { reason } : {}) };
}

/** The worse of the option verdict and what the program does; the option's reason wins a tie. */
function withProgram(o: OptionVerdict, cls: CommandClass, reason: string): OptionVerdict {
  return worse(o.class, cls) === o.class ? o : verdict(cls, reason, o);
}

export function sed(args: readonly Word[]): OptionVerdict {
  const o = judgeOptions('sed', SED, args);
  const given = o.given ?? [];
  if (has(given, '-f', '--file')) return verdict('unknown', 'sed -f runs a sed script from a file', o);
  const scripts = valuesOf(given, '-e', '--expression');
  if (!has(given, '-e', '--expression') && o.operands?.[0]) scripts.push(o.operands[0]);
  const dynamic = scripts.find((w) => !w.literal);
  // `sed "s/$a/$b/"` with a='x/id/e;s/' runs id: a script only known at run time could do anything.
  if (dynamic) return withProgram(o, 'unknown', `sed ${short(dynamic.value)}: the script is only known at run time`);
  const fx = scripts
    .map((w) => sedEffects(w.value))
    .reduce((x, y) => ({ runs: x.runs || y.runs, writes: x.writes || y.writes }), { runs: false, writes: false });
  const sandbox = has(given, '--sandbox');
  if (fx.runs && !sandbox) return withProgram(o, 'unknown', 'the sed script runs commands (e)');
  if (has(given, '-i', '--in-place'))
    return verdict(worse(o.class, 'write'), o.reason ?? 'sed -i edits files in place', o);
  return fx.writes && !sandbox ? withProgram(o, 'write', 'the sed script writes a file (w)') : o;
}

/**
 * What an awk program does beyond printing (see awkEffects), and gawk's own: `@load` loads native
 * code, `@include` program text not seen here, and `/inet/…` special files are network connections.
 * A textual check: false alarms are rare and only ever ask.
 */
function awkProgram(program: string): { class: CommandClass; reason: string } | undefined {
  if (/@\s*(load|include)\b/.test(program))
    return { class: 'unknown', reason: 'the awk program loads code (@load/@include)' };
  const fx = awkEffects(program);
  if (fx.runs) return { class: 'unknown', reason: 'the awk program runs commands' };
  if (/\/inet[46]?\//.test(program))
    return { class: 'network', reason: 'the awk program opens a network connection (/inet)' };
  return fx.writes ? { class: 'write', reason: 'the awk program writes a file' } : undefined;
}

export function awk(args: readonly Word[]): OptionVerdict {
  const o = judgeOptions('awk', AWK, args);
  const given = o.given ?? [];
  if (has(given, '-f', '--file', '-E', '--exec'))
    return verdict('unknown', 'awk -f runs an awk program from a file', o);
  if (has(given, '-l', '--load')) return verdict('unknown', 'awk -l loads native code', o);
  if (has(given, '-W')) return verdict('unknown', 'awk -W passes an option by name', o);
  for (const inc of valuesOf(given, '-i', '--include')) {
    if (!inc.literal || inc.value !== 'inplace')
      return verdict('unknown', `awk -i ${short(inc.value)} reads program text from a file`, o);
  }
  let out = has(given, '-i', '--include')
    ? verdict(worse(o.class, 'write'), o.reason ?? 'awk -i inplace edits files in place', o)
    : o;
  const programs = valuesOf(given, '-e', '--source');
  if (!has(given, '-e', '--source') && o.operands?.[0]) programs.push(o.operands[0]);
  const dynamic = programs.find((w) => !w.literal);
  if (dynamic) return withProgram(out, 'unknown', `awk ${short(dynamic.value)}: the program is only known at run time`);
  for (const p of programs) {
    const fx = awkProgram(p.value);
    if (fx) out = withProgram(out, fx.class, fx.reason);
  }
  return out;
}

const MODES_WRITE = [
  '-c',
  '-r',
  '-u',
  '-x',
  '-A',
  '--create',
  '--append',
  '--update',
  '--extract',
  '--get',
  '--catenate',
  '--concatenate',
];

/** `tar tvf a.tar` (letters without a dash, values taken in order from the next words) as `-t -v -f a.tar`. */
function dashed(args: readonly Word[]): Word[] {
  const first = args[0];
  if (!first?.literal || first.value.startsWith('-') || first.value === '') return [...args];
  const out: Word[] = [];
  let next = 1;
  for (const c of first.value) {
    out.push({ value: `-${c}`, literal: true, pattern: `-${c}` });
    if (TAR.short.get(c)?.values === 1 && next < args.length) out.push(args[next++]!);
  }
  return [...out, ...args.slice(next)];
}

export function tar(args: readonly Word[]): OptionVerdict {
  const o = judgeOptions('tar', TAR, dashed(args));
  const given = o.given ?? [];
  if (has(given, '--delete')) return verdict(worse(o.class, 'destructive'), 'tar --delete removes members', o);
  if (has(given, ...MODES_WRITE))
    return verdict(worse(o.class, 'write'), o.reason ?? 'tar creates or extracts files', o);
  if (!has(given, '--force-local')) {
    // `tar tf host:a.tar` runs rsh (or ssh) to host: an archive name with a colon before any slash is remote.
    const remote = valuesOf(given, '-f', '--file').find((w) => !w.literal || /^[^/]*:/.test(w.value));
    if (remote) {
      const reason = remote.literal
        ? `tar -f ${short(remote.value)} reads a remote archive over rsh`
        : `tar -f ${short(remote.value)}: an archive name only known at run time could name a remote host`;
      return withProgram(o, remote.literal ? 'network' : 'unknown', reason);
    }
  }
  return o.class === 'read-only' ? { ...o, reason: 'tar lists an archive' } : o;
}
