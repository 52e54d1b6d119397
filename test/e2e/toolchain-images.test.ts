import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerLabel } from '@gatehouse/shared';
import {
  ensureRunImage,
  LABEL,
  resolveToolchainImage,
  SandboxError,
  scanWorkspace,
  type Sandbox,
  type SandboxDriver,
} from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, sh, startDriver } from '../support/sandbox';

/**
 * A toolchain image with neither node nor git, with its own PATH entry and variable, a VOLUME, a
 * CMD and a USER of its own: the run image derived from it must still start the daemon (the
 * runtime's node), run commands as 10001 with the image's PATH and the bundled git behind the
 * wrapper, and keep every hardening.
 */
const stamp = `${process.pid}-${Date.now().toString(36)}`;
const BARE = `gatehouse-test/bare-toolchain:${stamp}`;
const NO_BASH = `gatehouse-test/no-bash:${stamp}`;
const created: string[] = [];

function localDebian(): string {
  for (const candidate of ['gatehouse/base-nats:bookworm', 'debian:bookworm-slim']) {
    try {
      execFileSync('docker', ['image', 'inspect', candidate], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error('no local Debian image (gatehouse/base-nats:bookworm or debian:bookworm-slim): run npm run build');
}

function buildTestImage(tag: string, dockerfile: string): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-toolchain-'));
  writeFileSync(path.join(dir, 'Dockerfile'), dockerfile);
  execFileSync(
    'docker',
    ['build', '-q', '-t', tag, '--label', `${LABEL.role}=test`, '--label', `${LABEL.owner}=${ownerLabel()}`, dir],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  created.push(tag);
}

function removeImage(tag: string): void {
  try {
    execFileSync('docker', ['image', 'rm', '-f', tag], { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

describe('toolchain images: any image, derived with the bundled runtime', () => {
  let driver: SandboxDriver;
  let bareRun: string;
  let sandbox: Sandbox;
  beforeAll(async () => {
    const base = localDebian();
    buildTestImage(
      BARE,
      [
        `FROM ${base}`,
        'RUN rm -rf /usr/bin/git /usr/lib/git-core /usr/share/git-core /usr/local/bin/node /usr/bin/nats-server \\',
        ' && mkdir -p /opt/tools/bin && printf "#!/bin/sh\\necho tool-from-image\\n" > /opt/tools/bin/mytool \\',
        ' && chmod 755 /opt/tools/bin/mytool',
        'ENV PATH=/opt/tools/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TOOLCHAIN_MARK=hello',
        'RUN mkdir -p /workspace && echo stale > /workspace/left-by-the-image',
        'VOLUME /data',
        'USER nobody',
        'CMD ["/bin/false"]',
        '',
      ].join('\n'),
    );
    bareRun = await ensureRunImage(await resolveToolchainImage(BARE), { prune: false });
    created.push(bareRun);
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_toolchain_bare', repoDir: makeRepo(), image: bareRun });
  });
  afterAll(async () => {
    await driver?.close();
    for (const tag of created.reverse()) removeImage(tag);
  });

  it('starts the daemon from an image with neither node nor git, commands as uid 10001', async () => {
    expect(await sh(sandbox, 'id -u; id -g')).toBe('10001\n10001\n');
    expect(await sh(sandbox, 'command -v node || echo no-node; test -e /usr/bin/git || echo no-system-git')).toBe(
      'no-node\nno-system-git\n',
    );
    const info = await driver.docker.getContainer(sandbox.info.containerId).inspect();
    expect(info.Config.Image).toBe(bareRun);
    expect(info.Config.User).toBe('0:0');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.Config.Cmd ?? []).toEqual([]);
  });

  it('starts with only the repository in the workspace, nothing the image kept at /workspace', async () => {
    expect(await sh(sandbox, 'ls -A')).toBe('.git\nREADME.md\nsrc\n');
  });

  it("runs commands with the image's PATH and variables, the wrapper first, no daemon variable", async () => {
    expect(await sh(sandbox, 'echo "$PATH"')).toBe(
      '/opt/gatehouse/bin:/opt/tools/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n',
    );
    expect(await sh(sandbox, 'mytool; echo "$TOOLCHAIN_MARK"; echo "$HOME"')).toBe('tool-from-image\nhello\n/tmp\n');
    expect(await sh(sandbox, 'env | grep -c "^GATEHOUSE_" || true')).toBe('0\n');
    expect(await sh(sandbox, 'env | grep -c "^LD_\\|^NODE_OPTIONS" || true')).toBe('0\n');
  });

  it('gives the command user the bundled git through the wrapper, and git works', async () => {
    expect(await sh(sandbox, 'command -v git')).toBe('/opt/gatehouse/bin/git\n');
    expect(await sh(sandbox, 'git --version')).toMatch(/^git version \d+\.\d+/);
    await sh(sandbox, 'echo new > added.txt && echo more >> README.md');
    expect(await sh(sandbox, 'git status --porcelain')).toBe(' M README.md\n?? added.txt\n');
    expect(await sh(sandbox, 'git diff --stat')).toContain('README.md');
    await sh(sandbox, 'git add -A && git -c user.email=t@t -c user.name=t commit -qm two && git log --format=%s');
    expect(await sh(sandbox, 'git log --format=%s')).toBe('two\nfixture\n');
  });

  it('takes its baseline with the bundled git and reports changes', async () => {
    await sh(sandbox, 'mkdir -p out && echo x > out/new.txt');
    const changes = await sandbox.changes();
    const paths = changes.files.map((f) => f.path).sort();
    expect(paths).toEqual(['README.md', 'added.txt', 'out/new.txt']);
    expect(changes.diff).toContain('+more');
    // The orchestrator's root scan (docker exec, around the daemon) gets the bundled git too.
    const scanned = await scanWorkspace(driver.docker.getContainer(sandbox.info.containerId), '', 30_000);
    expect(scanned.changes.map((c) => c.path).sort()).toEqual(paths);
  });

  it("puts a bounded tmpfs over the image's own VOLUME", async () => {
    const mounts = await rootExec(driver, sandbox, ['cat', '/proc/mounts']);
    expect(mounts.output).toMatch(/^tmpfs \/data tmpfs /m);
  });

  it('reuses the derived image: the same toolchain gives the same tag without building', async () => {
    const started = Date.now();
    expect(await ensureRunImage(BARE, { prune: false })).toBe(bareRun);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses an image without bash, saying why', async () => {
    buildTestImage(NO_BASH, `FROM ${BARE}\nUSER 0:0\nRUN ["/bin/rm", "-f", "/usr/bin/bash", "/bin/bash"]\n`);
    const err = await ensureRunImage(NO_BASH, { prune: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as Error).message).toMatch(/cannot be used for a sandbox: .*no bash/);
  });

  it('says what to do with an image that is neither here nor pullable', async () => {
    // A registry on loopback where nothing listens: the pull fails at once, nothing leaves the host.
    const err = await resolveToolchainImage('127.0.0.1:9/gatehouse-missing:nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as Error).message).toMatch(/not on this machine and could not be pulled.*docker load/);
    await expect(resolveToolchainImage('preset:cobol')).rejects.toThrow(/unknown preset preset:cobol/);
  });
});

describe('toolchain presets', () => {
  let driver: SandboxDriver;
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => driver?.close());

  it('preset:node, the default sandbox, has node, npm and npx', async () => {
    const sandbox = await driver.createSandbox({ runId: 'run_preset_node' });
    const out = await sh(sandbox, 'node --version; npm --version; npx --version; id -u');
    expect(out).toMatch(/^v\d+\.\d+\.\d+\n\d+\.\d+\.\d+\n\d+\.\d+\.\d+\n10001\n$/);
    await sandbox.destroy();
  });

  it('preset:python runs pytest on a repository, with pip and venv', async () => {
    const image = await ensureRunImage(await resolveToolchainImage('preset:python', { prune: false }), {
      prune: false,
    });
    const repo = makeRepo({
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n',
    });
    const sandbox = await driver.createSandbox({ runId: 'run_preset_python', repoDir: repo, image });
    const r = await run(
      sandbox,
      'exec',
      { command: 'python3 -m pytest -q -p no:cacheprovider' },
      { timeoutMs: 60_000 },
    );
    expect(r.output).toMatch(/1 passed/);
    expect(r.status).toBe('ok');
    expect(
      await sh(sandbox, 'python3 -m pip --version >/dev/null && python3 -m venv /tmp/v && /tmp/v/bin/python -V'),
    ).toMatch(/^Python 3\./);
    await sandbox.destroy();
  });
});
