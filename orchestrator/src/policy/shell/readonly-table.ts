import { outputOperand, spec, type CommandSpec, type OperandEffect, type OptionVerdict } from './options';
import { isGlob, short, type Word } from './words';

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
export const FREE = new Set([
  'echo',
  'true',
  'false',
  ':',
  'yes',
  'sleep',
  'expr',
  'factor',
  'tsort',
  'pwd',
  'cd',
  'pushd',
  'popd',
  'dirs',
  'exit',
  'return',
  'break',
  'continue',
  'shift',
  'times',
  'umask',
  'ulimit',
  'unalias',
  'set',
  'shopt',
  'help',
  'printenv',
  'env',
  'nice',
  'nohup',
  'timeout',
  'time',
  'xargs',
  'command',
  'builtin',
  'exec',
  'stdbuf',
  'setsid',
  'coproc',
  'trap',
  'ps',
  'pstree',
  'pgrep',
  'top',
  'htop',
  'vmstat',
  'exa',
  'eza',
  'type',
  '[[',
  'find',
]);

const GREP_LONG = `extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case
  word-regexp line-regexp null-data no-messages invert-match max-count= byte-offset line-number line-buffered
  with-filename no-filename label= only-matching quiet silent binary-files= text directories= devices= recursive
  dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count
  initial-tab null before-context= after-context= context= group-separator= no-group-separator color? colour?
  binary`;
const DIFF_LONG = `normal brief report-identical-files context? unified? ed rcs side-by-side width= left-column
  suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize=
  suppress-blank-empty paginate! recursive no-dereference new-file unidirectional-new-file ignore-file-name-case
  no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= ignore-case
  ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines
  ignore-matching-lines= text strip-trailing-cr ifdef= old-group-format= new-group-format=
  unchanged-group-format= changed-group-format= line-format= old-line-format= new-line-format=
  unchanged-line-format= minimal horizon-lines= speed-large-files color? palette= binary inhibit-hunk-merge`;
const SUM_LONG = 'binary check tag text zero ignore-missing quiet status strict warn';
const LS = spec(
  'aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1I:T:w:',
  `all almost-all author escape block-size= ignore-backups
  color? directory dired classify? file-type format= full-time group-directories-first no-group human-readable si
  dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink? indicator-style= inode ignore=
  kibibytes dereference numeric-uid-gid literal hide-control-chars show-control-chars quote-name quoting-style=
  reverse recursive size sort= time= time-style= tabsize= width= context zero`,
);
const GREP = spec('EFGPiyvwxzsbnHhoqaIrRLlcTZUVe:f:m:A:B:C:d:D:', GREP_LONG, { numeric: true });
const DIFF = spec('abBdeEfilnNpPqrsStTuvwWxyZC:U:D:F:I:L:S:W:X:x:l!', DIFF_LONG, { numeric: true });
const SUMS = spec('bctzw', SUM_LONG);
const BASE = spec('diw:', 'decode ignore-garbage wrap=');

/** `date +FORMAT` prints; `date MMDDhhmm[[CC]YY][.ss]` sets the clock. */
function dateOperands(ops: readonly Word[]): OperandEffect | undefined {
  const set = ops.find((o) => !o.literal || !o.value.startsWith('+'));
  return set ? { class: 'privilege', reason: 'date with a time operand sets the clock' } : undefined;
}

/** `less +CMD` and `more +CMD` run CMD as a pager command first; only `+N` and `+/pattern` are plain. */
function pagerOperands(ops: readonly Word[]): OperandEffect | undefined {
  const cmd = ops.find((o) => !o.literal || (o.value.startsWith('+') && !/^\+(\d+|\/[^!|]*)$/.test(o.value)));
  return cmd ? { class: 'unknown', reason: `${cmd.value.slice(0, 20)}: a pager command run at start` } : undefined;
}

/** binutils tools read further options from `@FILE`. */
function responseFiles(ops: readonly Word[]): OperandEffect | undefined {
  return ops.some((o) => !o.literal || o.value.startsWith('@'))
    ? { class: 'unknown', reason: 'strings @FILE reads more options from FILE' }
    : undefined;
}

/** `bat cache --build` writes bat's cache; otherwise operands are files to show. */
function batOperands(ops: readonly Word[]): OperandEffect | undefined {
  return ops[0]?.value === 'cache' ? { class: 'write', reason: 'bat cache changes its syntax cache' } : undefined;
}

/** bash's `history`: printing (or `-p`) only reads; the other options change or write the history. */
const HISTORY = spec('pc+d:+a+n+r+w+s+', '');

export const READ_ONLY_SPECS: Record<string, CommandSpec> = {
  ls: LS,
  dir: LS,
  vdir: LS,
  ll: LS,
  la: LS,
  cat: spec('AbeEnstTuv', 'show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting'),
  tac: spec('brs:', 'before regex separator='),
  head: spec('qvzc:n:', 'bytes= lines= quiet silent verbose zero-terminated', { numeric: true }),
  tail: spec(
    'fFqvzc:n:s:',
    `bytes= follow? retry lines= max-unchanged-stats= pid= quiet silent sleep-interval=
    verbose zero-terminated`,
    { numeric: true },
  ),
  less: spec(
    'aAbBcCdeEfFgGiIjJKLmMnNqQrRsSuUVwWXz~h:j:o:>O:>p:P:t:T:x:y:b:k:!D:#:',
    `search-skip-screen
    SEARCH-SKIP-SCREEN buffers= auto-buffers clear-screen dumb color= quit-at-eof QUIT-AT-EOF force
    quit-if-one-screen hilite-search HILITE-SEARCH max-back-scroll= ignore-case IGNORE-CASE jump-target=
    status-column lesskey-file=! lesskey-src=! lesskey-content=! quit-on-intr no-lessopen long-prompt LONG-PROMPT
    line-numbers LINE-NUMBERS log-file=> LOG-FILE=> pattern= prompt= quiet QUIET silent SILENT raw-control-chars
    RAW-CONTROL-CHARS squeeze-blank-lines chop-long-lines tag= tag-file= underline-special UNDERLINE-SPECIAL
    hilite-unread HILITE-UNREAD tabs= no-init max-forw-scroll= window= quotes= tilde shift= file-size follow-name
    incsearch line-num-width= mouse no-keypad no-histdups rscroll= save-marks status-col-width= use-backslash
    use-color wheel-lines= exit-follow-on-close no-number-headers no-search-headers redraw-on-quit`,
    { abbrev: 'exact', operands: pagerOperands },
  ),
  more: spec('dflcpsun:', 'silent logical no-pause print-over clean-print exit-on-eof squeeze plain lines=', {
    numeric: true,
    operands: pagerOperands,
  }),
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  rg: spec(
    'aBcFHhiIlLnNopPqsSuUvVwxA:B:C:d:e:E:f:g:j:m:M:r:t:T:z!0',
    `after-context= before-context= context=
    count count-matches case-sensitive ignore-case smart-case fixed-strings glob= iglob= hidden no-hidden
    no-ignore no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global no-ignore-exclude no-ignore-files
    ignore-file= ignore-file-case-insensitive line-number no-line-number with-filename no-filename files
    files-with-matches files-without-match follow max-count= max-depth= maxdepth= max-filesize= max-columns=
    max-columns-preview only-matching passthru pcre2 engine= quiet regexp= file= replace= type= type-not=
    type-add= type-clear= type-list unrestricted invert-match word-regexp line-regexp vimgrep json heading
    no-heading color= colors= column no-column byte-offset sort= sortr= stats trim null null-data text
    binary multiline multiline-dotall encoding= crlf context-separator= field-match-separator=
    field-context-separator= path-separator= one-file-system pretty threads= debug trace no-messages
    no-config ignore-case-filenames iglob-case-insensitive glob-case-insensitive hyperlink-format=
    include-zero line-buffered block-buffered mmap no-mmap no-unicode no-require-git files-with-matches
    auto-hybrid-regex dfa-size-limit= regex-size-limit= search-zip! pre=! pre-glob= hostname-bin=!
    generate=`,
    { abbrev: 'exact' },
  ),
  ag: spec(
    'aAbBcCDfgGHiLlmnopQrRsStuUvwz0:A:B:C:G:g:m:p:',
    `ackmate all-types all-text after= before= break
    nobreak case-sensitive color nocolor column context= count filename nofilename files-with-matches
    files-without-matches follow group nogroup hidden ignore= ignore-case ignore-dir= literal max-count=
    multiline nomultiline noheading heading numbers nonumbers only-matching path-to-ignore= print-long-lines
    silent skip-vcs-ignores smart-case stats unrestricted vimgrep word-regexp workers= depth= one-device
    search-binary search-zip filename-pattern= file-search-regex= print0 null pager=!`,
    { abbrev: 'exact' },
  ),
  wc: spec('clLmw', 'files0-from= bytes chars lines max-line-length words total='),
  stat: spec('Lftc:', 'dereference file-system cached= format= printf= terse'),
  file: spec(
    'bcdEhiIkLlNnprsSvz!Z!0e:F:f:m:P:C+p+',
    `magic-file= uncompress! uncompress-noreport! brief
    checking-printout exclude= exclude-quiet= files-from= separator= mime mime-type mime-encoding apple extension
    keep-going list dereference no-dereference no-buffer no-pad print0 preserve-date+ parameter= raw
    special-files no-sandbox! compile+ debug`,
  ),
  which: spec('as', '', { abbrev: 'exact' }),
  whereis: spec('bBmMsSful', '', { abbrev: 'exact' }),
  uniq: spec(
    'cdDiuzf:s:w:',
    `count repeated all-repeated? skip-fields= group? ignore-case skip-chars= unique
    zero-terminated check-chars=`,
    { operands: outputOperand(1, 'uniq IN OUT') },
  ),
  diff: DIFF,
  colordiff: DIFF,
  diff3: spec(
    'aAeEimTxX3vL:',
    `show-all ed show-overlap easy-only overlap-only merge text strip-trailing-cr
    initial-tab diff-program=! label=`,
  ),
  sdiff: spec(
    'abBdEHilstvWZI:w:o:>',
    `output=> ignore-case ignore-tab-expansion ignore-trailing-space
    ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= strip-trailing-cr text width=
    left-column suppress-common-lines expand-tabs tabsize= minimal speed-large-files diff-program=!`,
  ),
  cmp: spec('blsvi:n:', 'print-bytes ignore-initial= verbose bytes= quiet silent'),
  comm: spec('123z', 'check-order nocheck-order output-delimiter= total zero-terminated'),
  cut: spec(
    'snzb:c:d:f:',
    `bytes= characters= delimiter= fields= complement only-delimited output-delimiter=
    zero-terminated`,
  ),
  tr: spec('cCdst', 'complement delete squeeze-repeats truncate-set1'),
  jq: spec(
    'acCejMnrRsSL:f:',
    `arg== argjson== slurpfile== rawfile== args jsonargs tab indent= from-file= seq
    stream stream-errors ascii-output sort-keys color-output monochrome-output raw-output raw-output0
    join-output raw-input null-input exit-status slurp compact-output unbuffered build-configuration`,
    { abbrev: 'exact' },
  ),
  column: spec(
    'tJeLxdh0c:C:s:o:N:n:O:l:E:R:T:W:H:r:i:p:',
    `table table-name= table-order= table-columns=
    table-column= table-columns-limit= table-noextreme= table-noheadings table-header-repeat table-hide=
    table-right= table-truncate= table-wrap= keep-empty-lines json tree= tree-id= tree-parent= output-width=
    output-separator= separator= fillrows`,
  ),
  paste: spec('szd:', 'delimiters= serial zero-terminated'),
  join: spec('iza:e:j:o:t:v:1:2:', 'ignore-case check-order nocheck-order header zero-terminated'),
  nl: spec(
    'pb:d:f:h:i:l:n:s:v:w:',
    `body-numbering= section-delimiter= footer-numbering= header-numbering=
    line-increment= join-blank-lines= number-format= no-renumber number-separator= starting-line-number=
    number-width=`,
  ),
  fold: spec('bsw:', 'bytes spaces width=', { numeric: true }),
  fmt: spec('cstup:w:g:', 'width= crown-margin prefix= split-only tagged-paragraph uniform-spacing goal=', {
    numeric: true,
  }),
  expand: spec('it:', 'initial tabs=', { numeric: true }),
  unexpand: spec('at:', 'all first-only tabs=', { numeric: true }),
  rev: spec('0', 'zero'),
  seq: spec('wf:s:', 'format= separator= equal-width', { numeric: true }),
  basename: spec('azs:', 'multiple suffix= zero'),
  dirname: spec('z', 'zero'),
  realpath: spec(
    'emLPqsz',
    `canonicalize-existing canonicalize-missing logical physical quiet relative-to=
    relative-base= strip no-symlinks zero`,
  ),
  readlink: spec(
    'efmnqsvz',
    'canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero',
  ),
  md5sum: SUMS,
  sha1sum: SUMS,
  sha224sum: SUMS,
  sha256sum: SUMS,
  sha384sum: SUMS,
  sha512sum: SUMS,
  b2sum: spec('bctzwl:', `${SUM_LONG} length=`),
  shasum: spec(
    'bcst0Up:a:',
    'algorithm= binary check text universal 01 tag status quiet warn strict ignore-missing portable',
    { abbrev: 'exact' },
  ),
  cksum: spec(
    'clzwa:',
    'algorithm= base64 check length= raw tag untagged zero ignore-missing quiet status strict warn debug',
  ),
  sum: spec('rs', 'sysv'),
  base32: BASE,
  base64: BASE,
  basenc: spec(
    'diw:',
    `decode ignore-garbage wrap= base64 base64url base32 base32hex base16 base2msbf base2lsbf
    z85`,
  ),
  // xxd's options are single-dash words (`-cols 16`): see xxdVerdict in commands.ts.
  hexdump: spec(
    'bcCdoxvL::e:f:n:s:',
    `one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal
    two-bytes-hex color? format= format-file= length= skip= no-squeezing`,
  ),
  od: spec(
    'abcdfilosxvw::A:j:N:S:t:',
    `traditional address-radix= endian= skip-bytes= read-bytes= strings?
    format= output-duplicates width?`,
  ),
  strings: spec(
    'adfwhvDUe:n:o:s:t:T:',
    `all data print-file-name bytes= radix= include-all-whitespace target=
    encoding= unicode= output-separator=`,
    { numeric: true, operands: responseFiles },
  ),
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
  tree: spec(
    'adfFgilpqsuACDJnNrtUvxXhQSL:P:I:H:T:o:>R+',
    `noreport charset= filelimit= dirsfirst filesfirst
    timefmt= si du prune info infofile= gitignore gitfile= noindent sort= fromfile fromtabfile metafirst
    hintro= houtro= nolinks opt-toggle matchdirs ignore-case icase version help`,
    { abbrev: 'exact', nextWordValues: true },
  ),
  fd: spec(
    'aHIsiglLpq0uFt:e:E:d:S:o:c:j:x!X!',
    `hidden no-hidden no-ignore ignore no-ignore-vcs ignore-vcs
    no-ignore-parent unrestricted case-sensitive ignore-case glob regex fixed-strings and= absolute-path
    relative-path list-details follow no-follow full-path print0 max-depth= min-depth= exact-depth= prune
    type= extension= exclude= size= changed-within= changed-before= newer= older= owner= color= threads=
    max-results= base-directory= path-separator= search-path= strip-cwd-prefix? one-file-system show-errors
    quiet has-results ignore-file= format= hyperlink? exec=! exec-batch=! batch-size=`,
    { abbrev: 'exact' },
  ),
  bat: spec(
    'AnpPdufl:H:r:m:',
    `show-all plain language= highlight-line= file-name= diff diff-context= tabs= wrap=
    chop-long-lines terminal-width= number color= italic-text= decorations= force-colorization paging= pager=!
    map-syntax= ignored-suffix= theme= list-themes list-languages style= line-range= unbuffered squeeze-blank
    squeeze-limit= strip-ansi= nonprintable-notation= binary= config-file config-dir cache-dir diagnostic
    acknowledgements`,
    { abbrev: 'exact', operands: batOperands },
  ),
  zcat: spec('flqrtvS:', 'force list quiet recursive suffix= synchronous test verbose'),
  bzcat: spec('fqvsLc', 'force quiet verbose small stdout license', { abbrev: 'exact' }),
  xzcat: spec(
    'cdfklqQtvTF:M:T:',
    'stdout decompress force keep list quiet no-warn test verbose threads= format= memlimit=',
    { abbrev: 'exact' },
  ),
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
  numfmt: spec(
    'zd:',
    `debug delimiter= field= format= from= from-unit= grouping header? invalid= padding= round=
    suffix= to= to-unit= zero-terminated`,
  ),
  shuf: spec('erzi:n:o:>', 'echo input-range= head-count= output=> random-source= repeat zero-terminated'),
  envsubst: spec('v', 'variables'),
  diffstat: spec('bcCdDkKlmqrRstTuvVD:e:>f:n:N:o:>p:r:S:w:', '', { abbrev: 'exact' }),
  dmesg: spec(
    'dehHkPrStTuwWxJc#C#D#E#F:f:l:L::n:#s:',
    `clear# read-clear# console-off# console-on# file= facility=
    human json kernel color? level= console-level=# nopager force-prefix raw noescape syslog buffer-size=
    userspace follow follow-new decode show-delta reltime ctime notime time-format= since= until=`,
  ),
  sort: spec(
    'bcCdfghiMmnRrsuVzk:S:t:T:o:>',
    `files0-from= ignore-leading-blanks dictionary-order ignore-case
    general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort
    random-source= reverse sort= version-sort batch-size= check? compress-program=! debug key= merge output=>
    stable buffer-size= field-separator= temporary-directory= parallel= unique zero-terminated`,
    { numeric: true },
  ),
};

/** xxd's own option syntax: single-dash words (`-c 16`, `-cols 16`, `-c16`); a second operand is its output file. */
const XXD_FLAGS =
  /^-(a|autoskip|b|bits|C|capitalize|d|decimal|e|E|EBCDIC|h|help|i|include|p|ps|postscript|plain|r|revert|u|uppercase|v|version)$/;
const XXD_VALUED = /^-(c|cols|g|groupsize|l|len|n|name|o|offset|s|seek|R)$/;
function xxd(args: readonly Word[]): OptionVerdict {
  const judged = (cls: OptionVerdict['class'], reason?: string, writes: string[] = []): OptionVerdict => ({
    class: cls,
    ...(reason ? { reason } : {}),
    writes,
    conditions: [],
  });
  const ops: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.literal)
      return judged('unknown', `xxd ${short(w.value)}: an argument only known at run time could be an output file`);
    if (w.value === '--') {
      ops.push(...args.slice(i + 1));
      break;
    }
    if (isGlob(w.pattern))
      return judged('unknown', `xxd ${short(w.value)}: the glob could expand to an option or to an output file`);
    if (!w.value.startsWith('-') || w.value === '-') ops.push(w);
    else if (XXD_VALUED.test(w.value)) i++;
    else if (!XXD_FLAGS.test(w.value) && !/^-[cglnosR][^a-z]/.test(w.value))
      return judged('unknown', `xxd ${short(w.value)}: not an option known to be read-only`);
  }
  const out = ops[1];
  return out && out.value !== '-'
    ? judged('write', `xxd IN OUT writes ${short(out.value)}`, [out.value])
    : judged('read-only');
}

/** Commands whose option syntax the spec language does not cover. */
export const CUSTOM_JUDGES: Record<string, (args: readonly Word[]) => OptionVerdict> = { xxd };

// Debian's names for fd and bat (the classifier resolves them to fd and bat first).
READ_ONLY_SPECS.fdfind = READ_ONLY_SPECS.fd!;
READ_ONLY_SPECS.batcat = READ_ONLY_SPECS.bat!;
