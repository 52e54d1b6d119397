import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownerLabel } from '@gatehouse/shared';
import {
  docker,
  ensureBuiltImage,
  ensureRunImage,
  LABEL,
  resolveToolchainImage,
  type SandboxDriver,
} from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * Red team (found reviewing issue 16's code cache): the runtime's node and its loader run as root
 * inside the toolchain image's file system, and two of its files name code for them to load
 * whatever the environment says: glibc's /etc/ld.so.preload, and OpenSSL's default configuration
 * (/etc/ssl/openssl.cnf here), whose nodejs_conf section node reads at start and which can load a
 * provider library. Root loading the image's library in the daemon (or in the run image's
 * preparation step, which could rewrite the daemon) would be the end of the boundary. The files
 * here name libraries that do not exist, which is enough to see who reads them: the loader says so
 * on stderr, and node aborts on a provider it cannot load.
 */
const stamp = `${process.pid}-${Date.now().toString(36)}`;
const created: string[] = [];
const TOOLCHAIN = await ensureBuiltImage('preset-node', { prune: false });

afterAll(() => {
  for (const tag of created.reverse())
    try {
      execFileSync('docker', ['image', 'rm', '-f', tag], { stdio: 'ignore' });
    } catch {
      // already gone
    }
});

function build(tag: string, lines: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt16-'));
  writeFileSync(path.join(dir, 'Dockerfile'), [`FROM ${TOOLCHAIN}`, 'USER 0:0', ...lines, ''].join('\n'));
  execFileSync(
    'docker',
    ['build', '-q', '-t', tag, '--label', `${LABEL.role}=test`, '--label', `${LABEL.owner}=${ownerLabel()}`, dir],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  created.push(tag);
  return tag;
}

describe('a toolchain image whose /etc names libraries for root to load (red team)', () => {
  let driver: SandboxDriver | undefined;
  afterAll(async () => driver?.close());

  it('the daemon and the image preparation load neither the preload list nor the OpenSSL configuration', async () => {
    const tag = build(`gatehouse-test/rt16-etc:${stamp}`, [
      "RUN echo /nonexistent-gh-preload.so > /etc/ld.so.preload && mkdir -p /etc/ssl && printf '%s\\n' \\",
      "    'nodejs_conf = nc' '[nc]' 'providers = ps' '[ps]' 'evil = es' '[es]' \\",
      "    'module = /nonexistent-gh-provider.so' 'activate = 1' > /etc/ssl/openssl.cnf",
      'ENV OPENSSL_CONF=/etc/ssl/openssl.cnf NODE_REDIRECT_WARNINGS=/var/gatehouse/baseline.tree \\',
      '    NODE_V8_COVERAGE=/workspace/.rt16-coverage',
    ]);
    // The files work: the image's own programs read the preload list (positive control).
    const control = execFileSync('docker', ['run', '--rm', '--entrypoint', '/bin/sh', tag, '-c', '/bin/true 2>&1'], {
      encoding: 'utf8',
    });
    expect(control).toMatch(/ld\.so.*nonexistent-gh-preload\.so/);

    const runImage = await ensureRunImage(await resolveToolchainImage(tag), { prune: false });
    created.push(runImage);
    // Variables that would have root's node write where the image says are emptied in the run image.
    const env = (await docker().getImage(runImage).inspect()).Config.Env;
    expect(env).toEqual(expect.arrayContaining(['NODE_REDIRECT_WARNINGS=', 'NODE_V8_COVERAGE=']));
    driver = await startDriver();
    const sandbox = await driver.createSandbox({ runId: 'run_rt16_etc', repoDir: makeRepo(), image: runImage });
    // The command user's programs are the image's, with its loader: they do read the list (their
    // own business, and a second positive control); the daemon that served the call did not.
    const served = await sh(sandbox, 'echo served');
    expect(served).toMatch(/nonexistent-gh-preload\.so/);
    expect(served).toMatch(/^served$/m);
    await sandbox.changes(); // the daemon's root git too
    const logs = (
      await driver.docker.getContainer(sandbox.info.containerId).logs({ stdout: true, stderr: true })
    ).toString('latin1');
    expect(logs).toContain('"msg":"ready"');
    expect(logs).not.toMatch(/ld\.so|preload|OpenSSL|provider/i);
  }, 300_000);

  it('an image that declares a VOLUME over /etc is refused with the reason, before anything is built', async () => {
    const tag = build(`gatehouse-test/rt16-volume:${stamp}`, ['VOLUME /etc']);
    const before = await docker().listImages({ filters: { reference: ['gatehouse/run'] } });
    await expect(ensureRunImage(await resolveToolchainImage(tag), { prune: false })).rejects.toThrow(
      /declares VOLUME \/etc: .*remove that VOLUME/,
    );
    const after = await docker().listImages({ filters: { reference: ['gatehouse/run'] } });
    expect(after.map((i) => i.Id).sort()).toEqual(before.map((i) => i.Id).sort());
  }, 300_000);
});
