import { outputOperand, spec, type CommandSpec, type OperandEffect } from '../options';
import type { Word } from '../words';

/**
 * The read-only allowlist, part one: file and text tools (see tables/readonly.ts for the syntax
 * and the sources of these lists).
 */

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

export const FILE_TOOL_SPECS: Record<string, CommandSpec> = {
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
  // xxd's options are single-dash words (`-cols 16`): see xxd.ts.
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
  numfmt: spec(
    'zd:',
    `debug delimiter= field= format= from= from-unit= grouping header? invalid= padding= round=
    suffix= to= to-unit= zero-terminated`,
  ),
  shuf: spec('erzi:n:o:>', 'echo input-range= head-count= output=> random-source= repeat zero-terminated'),
  envsubst: spec('v', 'variables'),
  diffstat: spec('bcCdDkKlmqrRstTuvVD:e:>f:n:N:o:>p:r:S:w:', '', { abbrev: 'exact' }),
  sort: spec(
    'bcCdfghiMmnRrsuVzk:S:t:T:o:>',
    `files0-from= ignore-leading-blanks dictionary-order ignore-case
    general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort
    random-source= reverse sort= version-sort batch-size= check? compress-program=! debug key= merge output=>
    stable buffer-size= field-separator= temporary-directory= parallel= unique zero-terminated`,
    { numeric: true },
  ),
};
