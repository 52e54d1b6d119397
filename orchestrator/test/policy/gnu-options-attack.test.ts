import { beforeAll, describe, expect, it } from 'vitest';
import { loadShellClassifier, type ShellClassifier } from '../../src/policy/shell/index';

/**
 * Found while attacking the fix for red team 2 (redteam2-classifier.test.ts): more spellings the
 * tools accept for options that write, run or connect, and everyday spellings that must stay
 * read-only. The corpus (corpus/shell-commands.json) holds the main cases; these are variants.
 */

let shell: ShellClassifier;
beforeAll(async () => {
  shell = await loadShellClassifier();
});
const readOnly = (command: string) => {
  const a = shell.classify(command);
  return a.followable && a.class === 'read-only';
};

describe('options that write, run or connect, however they are spelled, are not read-only', () => {
  it.each([
    "sed --e='s/x/y/e' f", // --e is only --expression
    "sed --expr 's/x/y/w out' f",
    'sed -n p f -i', // GNU sed permutes: -i after the operands still edits in place
    `awk -e '{print}' -e 'BEGIN{system("id")}' f`, // every -e is scanned, not only the last
    `awk -v x=1 -- '{system("id")}' f`,
    'awk -W exec x', // mawk's -W takes any long option by name
    'gawk --dump f', // --dump abbreviates --dump-variables (writes awkvars.out)
    'gawk -d f',
    'tar -t -f a.tar -M', // multi-volume prompts, and its prompt can start a shell
    'tar -tf a.tar --chec=10', // ambiguous: --checkpoint or --checkpoint-action
    'tar -tf a.tar --to-com=sh',
    'tar -t -f a.tar --index-file=idx',
    'tar tzf "$archive"', // an archive name only known at run time could be HOST:FILE
    'env -vS"touch x"',
    "xargs -i sh -c 'echo {}'",
    'find . -newer "$f"',
    "yq --in-place '.a=1' f",
    "yq $OPT '.a' f",
    'gofmt -w=true x.go',
    'hostname -b x',
    'GIT_INDEX_FILE=/tmp/i git status',
    'GIT_TRACE2_PERF=/workspace/x git status',
    "BAT_PAGER='sh -c id' bat f",
    'LESSKEYIN=keys less f',
    "export LESS='-o log'; git log",
  ])('%s', (command) => {
    expect(readOnly(command), `${command} was called read-only`).toBe(false);
  });
});

describe('everyday spellings stay read-only', () => {
  it.each([
    "sed -n '1,20p' file.txt",
    "sed -E 's/a/b/g' f",
    "sed --quiet --regexp-extended 's/a/b/p' f",
    "awk '{print $1}' access.log",
    "awk -F, -v OFS='\\t' '{print $1, $2}' f.csv",
    "awk --field-sep=: '{print $1}' /etc/passwd",
    "awk -e '{print}' f",
    'awk \'{print $1}\' "$f"',
    'tar tf a.tar',
    'tar -tzvf a.tgz',
    'tar --list --gzip --file=a.tgz',
    'tar -tf a.tar --force-local',
    'env LC_ALL=C sort f',
    'env --unset=FOO ls',
    'xargs -0 grep -l x',
    'xargs --null --max-args=1 echo',
    'time ls',
    '/usr/bin/time -v ls',
    'find . -name "*.ts" -not -path "./node_modules/*"',
    "yq -o json '.a' f",
    'gofmt -l .',
    'hostname -f',
    'LESS=-R git log',
  ])('%s', (command) => {
    expect(readOnly(command), JSON.stringify(shell.classify(command))).toBe(true);
  });
});
