import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';

/**
 * Second red team, issue 10: command lines the classifier calls read-only (allowed with no rules in
 * confirm-novel and sandboxed-auto) that write files, run programs or reach the network. Each was
 * checked against the real tool on Debian 12 (GNU sed 4.9, GNU tar 1.34, findutils, coreutils env,
 * git 2.39) where the tool is there; gawk-only options are gawk's documented ones (`awk` is gawk
 * on many images and the classifier maps gawk to awk). What SHOULD hold: none is read-only.
 */

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});

const notReadOnly = (command: string) => {
  const a = shell.classify(command);
  expect(a.followable && a.class === 'read-only', `${command} was called read-only`).toBe(false);
};

describe('red team 2: GNU long-option abbreviations the special-cased commands miss', () => {
  it.each([
    // sed --in is --in-place (GNU getopt_long): rewrites f. Verified: `sed --in s/a/b/ f1` changed f1.
    'sed --in s/a/b/ f',
    'sed --in-pl=.bak s/a/b/ f',
    // gawk: --source, --include, --file, --exec abbreviated; the program then is not what was scanned.
    `awk --so='BEGIN{system("touch /tmp/p")}'`,
    "awk --inc=inplace '{print}' f",
    'awk --fi=prog.awk f',
    'awk --ex=prog.awk f',
    // env --split-string abbreviated runs its value as a command line. Verified: touched /tmp/pwn1.
    "env --sp='touch /tmp/p'",
    "env --s='touch /tmp/p'",
    // xargs --replace abbreviated: input lines are spliced into the shell string. Verified: ran touch.
    "echo 'x; touch /tmp/p' | xargs --repl=Q sh -c 'echo Q'",
    "echo 'x; touch /tmp/p' | xargs --repl sh -c 'echo {}'",
    // GNU tar (argp) abbreviations of options that run programs. Verified: --checkpoint-act ran touch.
    'tar -t -f a.tar --use-comp=id',
    "tar --list --file=a.tar --checkpoint=1 --checkpoint-act=exec='touch /tmp/p'",
    'tar t --file a.tar --info-s=id',
    // GNU time: --out is --output.
    '/usr/bin/time --out=x ls',
  ])('%s', notReadOnly);
});

describe('red team 2: gawk options and program text that write files, load code or connect', () => {
  it.each([
    "awk --profile=out 'BEGIN{}'",
    "awk -pout 'BEGIN{}'",
    "awk --dump-variables=out 'BEGIN{}'",
    "awk -dout 'BEGIN{}'",
    "awk -oout 'BEGIN{}'",
    "awk --pretty-print=out 'BEGIN{}'",
    // -l / --load / @load load a shared object: native code the repository ships.
    "awk -l ./evil 'BEGIN{}'",
    "awk --load=./evil 'BEGIN{}'",
    `gawk '@load "./evil"; BEGIN{}'`,
    // @include reads more program text from a file the scanner never sees.
    `awk '@include "x.awk"'`,
    // gawk's /inet special files are TCP connections.
    `awk 'BEGIN{getline < "/inet/tcp/0/127.0.0.1/80"}'`,
  ])('%s', notReadOnly);
});

describe('red team 2: find given an argument only known at run time', () => {
  it.each([
    // Verified: in a directory with files a and b, this deleted both.
    "printf -- '-delete' | xargs find .",
    "printf -- '-delete' | xargs -I Q find . Q",
    'X=-delete; find . $X',
    'find . "$1"',
  ])('%s', notReadOnly);
});

describe('red team 2: environment variables that make a read-only tool run a program or write a file', () => {
  it.each([
    // GNU tar reads options from TAR_OPTIONS. Verified: the checkpoint action ran touch.
    "TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=touch\\ /tmp/p' tar tf a.tar",
    'TAR_OPTIONS=--use-compress-program=id tar tf a.tar',
    // git appends its trace to any absolute path: a write the path rules never see. Verified.
    'GIT_TRACE=/workspace/test/x git status',
    'GIT_TRACE2_EVENT=/workspace/test/x git log',
    'GIT_TRACE_PERFORMANCE=/workspace/test/x git log',
    // ripgrep reads options (--pre=PROGRAM among them) from the file this names.
    'RIPGREP_CONFIG_PATH=cfg rg x',
    // man reads options (--pager among them) from MANOPT.
    "MANOPT='--pager=id' man ls",
  ])('%s', notReadOnly);
});
