import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_PROGRAM_OVERRIDES, GIT_SAFE_ENV } from '../src/git';

/**
 * The sandbox's git wrapper (images/sandbox/bin/git), run here on the host with the host's git:
 * no Docker needed. The end-to-end proof in a real sandbox is test/e2e/git-config-programs.test.ts.
 */
const WRAPPER = fileURLToPath(new URL('../../images/sandbox/bin/git', import.meta.url));
const EVIL = '#!/bin/sh\necho "$1" >> "$MARKER"\ncat\n';

let dir: string;
let marker: string;
const env = () => ({
  HOME: dir,
  PATH: '/usr/local/bin:/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  MARKER: marker,
  LANG: 'C',
});
/** Runs the wrapper (with or without the sandbox's environment) and says what the planted programs did. */
const git = (args: string[], extraEnv: Record<string, string> = {}) => {
  const r = spawnSync('bash', [WRAPPER, ...args], {
    cwd: path.join(dir, 'repo'),
    env: { ...env(), ...extraEnv },
    encoding: 'utf8',
    timeout: 20_000,
  });
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n') : [];
  rmSync(marker, { force: true });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ran };
};

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-wrapper-'));
  marker = path.join(dir, 'ran');
  const repo = path.join(dir, 'repo');
  mkdirSync(repo);
  const host = (...a: string[]) => execFileSync('git', a, { cwd: repo, env: env(), stdio: 'pipe' });
  writeFileSync(path.join(repo, 'evil.sh'), EVIL, { mode: 0o755 });
  writeFileSync(path.join(repo, 'a.dat'), 'one\n');
  writeFileSync(path.join(repo, 'b.txt'), 'one\n');
  writeFileSync(path.join(repo, '.gitattributes'), '*.dat filter=evil merge=evil\n*.txt diff=evil\n');
  host('init', '-q');
  host('add', '-A');
  host('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
  const e = path.join(repo, 'evil.sh');
  appendFileSync(
    path.join(repo, '.git', 'config'),
    [
      '[core]',
      `\tfsmonitor = ${e} fsmonitor`,
      `\tpager = ${e} pager`,
      `\thooksPath = ${repo}`,
      '[filter "evil"]',
      `\tclean = ${e} clean`,
      `\tsmudge = ${e} smudge`,
      `\tprocess = ${e} process`,
      '[diff "evil"]',
      `\ttextconv = ${e} textconv`,
      `\tcommand = ${e} command`,
      '[diff]',
      `\texternal = ${e} external`,
      '[merge "evil"]',
      `\tdriver = ${e} merge`,
      '[pager]',
      `\tlog = ${e} pagerlog`,
      '[alias]',
      `\tst = !${e} alias`,
      '',
    ].join('\n'),
  );
  appendFileSync(path.join(repo, 'a.dat'), 'two\n');
  appendFileSync(path.join(repo, 'b.txt'), 'two\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the git wrapper', () => {
  it('faces a live fixture: the bare git runs the planted programs', () => {
    const r = spawnSync('git', ['diff'], {
      cwd: path.join(dir, 'repo'),
      env: env(),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(0);
    const ran = readFileSync(marker, 'utf8');
    rmSync(marker, { force: true });
    expect(ran).toMatch(/fsmonitor|clean|external/);
  });

  it.each([
    [['status']],
    [['diff']],
    [['log', '-p']],
    [['show', 'HEAD']],
    [['blame', 'b.txt']],
    [['-p', 'log', '-1']],
    [['-C', '.', '-c', 'color.ui=never', 'diff', 'HEAD']],
  ])('git %j runs none of the programs the repository names', (args) => {
    for (const extra of [{}, GIT_SAFE_ENV]) {
      const r = git(args, { ...extra, PATH: '/usr/local/bin:/usr/bin:/bin' });
      expect({ ran: r.ran, status: r.status }, r.stderr).toEqual({ ran: [], status: 0 });
    }
  });

  it('still shows the diff (plain, without the textconv or external diff)', () => {
    const r = git(['diff', '--', 'b.txt']);
    expect(r.stdout).toContain('+two');
  });

  it('overrides a program set with -c on the command line too', () => {
    const r = git(['-c', `filter.evil.clean=${path.join(dir, 'repo', 'evil.sh')} cli`, 'status']);
    expect(r.ran).toEqual([]);
  });

  it('disables shell aliases', () => {
    const r = git(['st']);
    expect(r.ran).toEqual([]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('gatehouse: programs named in the git config are disabled');
  });

  it("leaves git config alone, so it shows the repository's own settings", () => {
    const r = git(['config', '--get', 'filter.evil.clean']);
    expect(r.stdout).toContain('evil.sh clean');
  });

  it('refuses, saying why, when the config includes another file', () => {
    const other = path.join(dir, 'other.cfg');
    const r = git(['-c', `include.path=${other}`, 'status']);
    expect(r.status).toBe(128);
    expect(r.stderr).toContain(
      `gatehouse: git refused: the git configuration includes another file (include.path = ${other})`,
    );
    expect(r.ran).toEqual([]);
  });

  it('reads driver names holding control characters as they are (no separator can be forged)', () => {
    const repo = path.join(dir, 'repo');
    const name = 'x\u001ey\u001fz';
    appendFileSync(path.join(repo, '.gitattributes'), `*.ctl filter=${name}\n`);
    writeFileSync(path.join(repo, 'c.ctl'), 'one\n');
    appendFileSync(
      path.join(repo, '.git', 'config'),
      `[filter "${name}"]\n\tclean = ${path.join(repo, 'evil.sh')} ctl\n`,
    );
    try {
      expect(git(['add', '-n', 'c.ctl']).ran).toEqual([]);
      expect(spawnSync('git', ['add', '-n', 'c.ctl'], { cwd: repo, env: env() }).status).toBe(0);
      expect(readFileSync(marker, 'utf8')).toContain('ctl'); // the bare git does run it
    } finally {
      rmSync(marker, { force: true });
    }
  });

  it('does not expand an alias that carries global options', () => {
    const r = git(['-c', 'alias.s=-c core.fsmonitor=x status', 's']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('gatehouse: programs named in the git config are disabled');
  });

  it('refuses when the configuration cannot be read', () => {
    const r = git(['status'], { GIT_CONFIG_COUNT: '1' });
    expect(r.status).toBe(128);
    expect(r.stderr).toContain('gatehouse: git refused: could not read the git configuration (listing exit 128;');
  });

  it('covers every fixed-name override the sandbox environment sets', () => {
    const script = readFileSync(WRAPPER, 'utf8');
    const missing = GIT_PROGRAM_OVERRIDES.map(([k]) => k).filter((k) => !script.includes(`override ${k} `));
    expect(missing).toEqual([]);
  });
});
