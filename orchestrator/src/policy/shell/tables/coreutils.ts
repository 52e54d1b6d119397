import { type Aliases, type ClassLists, type Example } from './family';

/**
 * Coreutils and the other everyday file and text tools, and the shell's own builtins. The
 * read-only ones are read-only only with the options listed for them in tables/readonly.ts.
 * Wrappers (`env`, `nice`, `xargs`, `find`…) are listed as read-only here: what they run is
 * unwrapped and judged on its own (wrappers.ts).
 */

export const COREUTILS_CLASSES: ClassLists = {
  'read-only': `
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
  write: `
  touch mkdir mkfifo cp mv install ln link patch rename mktemp split csplit sponge dos2unix unix2dos
  zip ssh-keygen fallocate`,
  destructive: 'rm rmdir unlink shred srm wipe dd truncate kill pkill killall rimraf',
};

/** Options that make an ordinary tool run another program (`tar --to-command=sh`, `sort --compress-program=x`). */
export const RUNS_PROGRAM: Record<string, string[]> = {
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

export const COREUTILS_ALIASES: Aliases = {
  gsed: 'sed',
  gawk: 'awk',
  mawk: 'awk',
  nawk: 'awk',
  bunzip2: 'gzip',
  gunzip: 'gzip',
  bzip2: 'gzip',
  xz: 'gzip',
  unxz: 'gzip',
  zstd: 'gzip',
  unzstd: 'gzip',
  fdfind: 'fd',
  batcat: 'bat',
};

export const COREUTILS_EXAMPLES: Example[] = [
  ['ls -la src/', 'read-only'],
  ['cat README.md', 'read-only'],
  ['grep -rn TODO src', 'read-only'],
  ['sort -o out.txt in.txt', 'write'],
  ['sort --compress-prog=sh f', 'unknown'],
  ['uniq in out', 'write'],
  ['tee out.txt', 'write'],
  ['tee /dev/null', 'read-only'],
  ['sed -n 1,5p f', 'read-only'],
  ['sed -i s/a/b/ f', 'write'],
  ["awk '{print $1}' f", 'read-only'],
  ['awk \'BEGIN{system("id")}\'', 'unknown'],
  ['tar -tf a.tar', 'read-only'],
  ['tar -xf a.tar', 'write'],
  ['gunzip -c a.gz', 'read-only'],
  ['gzip f', 'write'],
  ['chmod +x f', 'write'],
  ['chmod u+s f', 'privilege'],
  ['touch f', 'write'],
  ['rm -rf build', 'destructive'],
  ['find . -name x', 'read-only'],
  ['find . -delete', 'destructive'],
  ['ls --frobnicate', 'unknown'],
  ['date +%s', 'read-only'],
  ['date 0101000024', 'privilege'],
  ['source env.sh', 'unknown'],
];
