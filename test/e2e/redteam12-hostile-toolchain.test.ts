import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerLabel } from '@gatehouse/shared';
import {
  ensureBuiltImage,
  ensureRunImage,
  LABEL,
  resolveToolchainImage,
  scanWorkspace,
  type Sandbox,
  type SandboxDriver,
} from '@gatehouse/orchestrator';
import { makeRepo, rootExec, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 12): a toolchain image's ENV is inherited by the daemon and by the orchestrator's
 * `docker exec` helpers, which run as root. Variables that name a file to run, pointed at a place
 * the command user writes (/tmp, /workspace), would hand root to the agent. The image also keeps a
 * setuid-root program and an /etc/passwd where uid 10001 is someone else.
 */
const stamp = `${process.pid}-${Date.now().toString(36)}`;
const HOSTILE = `gatehouse-test/hostile-env:${stamp}`;
const created: string[] = [];
// The default toolchain image (the global setup builds it): a fresh machine has no other to start from.
const TOOLCHAIN = await ensureBuiltImage('preset-node', { prune: false });

// Every image a test here built, whichever tests ran.
afterAll(() => {
  for (const tag of created.reverse()) {
    try {
      execFileSync('docker', ['image', 'rm', '-f', tag], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
});

describe('a toolchain image whose ENV points root at files the agent writes (red team)', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-'));
    writeFileSync(
      path.join(dir, 'Dockerfile'),
      [
        `FROM ${TOOLCHAIN}`,
        'USER 0:0',
        'RUN cp /usr/bin/id /usr/local/bin/suid-id && chmod 4755 /usr/local/bin/suid-id \\',
        " && echo 'imposter:x:10001:0:imposter:/root:/bin/bash' >> /etc/passwd \\",
        " && sed -i 's/^root:x:0:$/root:x:0:imposter/' /etc/group",
        'ENV BASH_ENV=/tmp/.rt12-bash-env ENV=/tmp/.rt12-bash-env NODE_OPTIONS="--require /tmp/.rt12-node.js" \\',
        "    GIT_CONFIG_PARAMETERS=\"'core.pager'='sh /tmp/.rt12-bash-env'\" PS4='$(sh /tmp/.rt12-bash-env)'",
        '',
      ].join('\n'),
    );
    execFileSync(
      'docker',
      ['build', '-q', '-t', HOSTILE, '--label', `${LABEL.role}=test`, '--label', `${LABEL.owner}=${ownerLabel()}`, dir],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    created.push(HOSTILE);
    const runImage = await ensureRunImage(await resolveToolchainImage(HOSTILE), { prune: false });
    created.push(runImage);
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_rt12_hostile_env', repoDir: makeRepo(), image: runImage });
  });
  afterAll(async () => {
    await driver?.close();
  });

  it('the root scan runs nothing the agent wrote, whatever the image points BASH_ENV and friends at', async () => {
    await sh(
      sandbox,
      'printf "id -u >> /tmp/.rt12-ran-as 2>/dev/null\\n" > /tmp/.rt12-bash-env; ' +
        'printf "try { require(\\"fs\\").appendFileSync(\\"/tmp/.rt12-ran-as\\", ' +
        '\\"node \\" + process.getuid() + \\"\\\\n\\") } catch {}" ' +
        '> /tmp/.rt12-node.js; chmod 644 /tmp/.rt12-bash-env /tmp/.rt12-node.js; echo changed >> README.md',
    );
    await sh(sandbox, 'true'); // a command's bash reads the file now that it exists
    const scanned = await scanWorkspace(driver.docker.getContainer(sandbox.info.containerId), '', 30_000);
    expect(scanned.changes.map((c) => c.path)).toContain('README.md');
    await sandbox.changes();
    const ran = await rootExec(driver, sandbox, ['sh', '-c', 'cat /tmp/.rt12-ran-as 2>/dev/null; true']);
    // The command user's own shells read it (the image's variables are theirs), which shows the file
    // works; no process of root's may have.
    expect(ran.output).toMatch(/^10001$/m);
    expect(ran.output.split('\n').filter((l) => /(^|node )0$/.test(l.trim()))).toEqual([]);
  });

  it('a setuid-root program gives the command user nothing (no-new-privileges)', async () => {
    expect(await sh(sandbox, 'ls -l /usr/local/bin/suid-id | cut -c1-10; suid-id -u; suid-id -G')).toBe(
      '-rwsr-xr-x\n10001\n10001\n',
    );
  });

  it("an image's passwd entry for 10001 does not give commands its groups", async () => {
    expect(await sh(sandbox, 'id -u; id -g; id -G')).toBe('10001\n10001\n10001\n');
  });
});

describe('a toolchain image whose /workspace, /tmp and /var/gatehouse are symbolic links (red team)', () => {
  it('derives a run image with real folders there, leaving the link targets alone', async () => {
    const tag = `gatehouse-test/linked-dirs:${stamp}`;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-'));
    writeFileSync(
      path.join(dir, 'Dockerfile'),
      [
        `FROM ${TOOLCHAIN}`,
        'USER 0:0',
        // /tmp would get a tmpfs (mode 1777) and /workspace the agent's volume: mounted where the link leads.
        'RUN mkdir -p /opt/precious/ws /opt/precious/state && echo keep > /opt/precious/ws/keep \\',
        ' && chmod 755 /opt/precious /opt/precious/ws && rm -rf /workspace /tmp /var/gatehouse \\',
        ' && ln -s /opt/precious/ws /workspace && ln -s /opt/precious /tmp && ln -s /opt/precious/state /var/gatehouse',
        '',
      ].join('\n'),
    );
    execFileSync(
      'docker',
      ['build', '-q', '-t', tag, '--label', `${LABEL.role}=test`, '--label', `${LABEL.owner}=${ownerLabel()}`, dir],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    created.push(tag);
    const runImage = await ensureRunImage(await resolveToolchainImage(tag), { prune: false });
    created.push(runImage);
    const out = execFileSync(
      'docker',
      [
        'run',
        '--rm',
        '--label',
        `${LABEL.role}=test`,
        '--entrypoint',
        '/bin/sh',
        runImage,
        '-c',
        'stat -c "%n %F %a %u" /workspace /tmp /var/gatehouse /opt/precious /opt/precious/ws; ' +
          'cat /opt/precious/ws/keep',
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe(
      [
        '/workspace directory 755 10001',
        '/tmp directory 1777 0',
        '/var/gatehouse directory 700 0',
        '/opt/precious directory 755 0',
        '/opt/precious/ws directory 755 0',
        'keep',
        '',
      ].join('\n'),
    );
  });
});

const hasCompiler = spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0;

describe('a toolchain image whose LD_PRELOAD names a file the agent writes (red team)', () => {
  let driver: SandboxDriver;
  const tag = `gatehouse-test/preload-env:${stamp}`;
  afterAll(async () => {
    await driver?.close();
  });

  // The daemon's own git (baseline, changes) runs as root: it must not take the image's variables.
  // (/tmp is noexec; the workspace is where the agent can leave a library.)
  it.skipIf(!hasCompiler)("the daemon's root git does not load it; the command user's programs do", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt12-so-'));
    writeFileSync(
      path.join(dir, 'evil.c'),
      '#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void run(void) {\n' +
        '  FILE *f = fopen("/tmp/.rt12-preloaded", "a");\n' +
        '  if (f) { fprintf(f, "%d\\n", (int)getuid()); fclose(f); }\n}\n',
    );
    execFileSync('cc', ['-shared', '-fPIC', '-o', path.join(dir, 'evil.so'), path.join(dir, 'evil.c')]);
    writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TOOLCHAIN}\nENV LD_PRELOAD=/workspace/.rt12-evil.so\n`);
    execFileSync(
      'docker',
      ['build', '-q', '-t', tag, '--label', `${LABEL.role}=test`, '--label', `${LABEL.owner}=${ownerLabel()}`, dir],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    created.push(tag);
    const runImage = await ensureRunImage(await resolveToolchainImage(tag), { prune: false });
    created.push(runImage);
    driver = await startDriver();
    const repo = makeRepo({
      'README.md': '# r\n',
      'lib/evil.so.b64': readFileSync(path.join(dir, 'evil.so')).toString('base64'),
    });
    const sandbox = await driver.createSandbox({ runId: 'run_rt12_preload', repoDir: repo, image: runImage });
    await sh(sandbox, 'base64 -d lib/evil.so.b64 > .rt12-evil.so && chmod 755 .rt12-evil.so; echo x > new.txt');
    await sh(sandbox, 'true'); // the command user's bash loads it: the file works
    await sandbox.changes(); // the daemon's git, as root
    const ran = await rootExec(driver, sandbox, ['/bin/cat', '/tmp/.rt12-preloaded']);
    expect(ran.output).toMatch(/^10001$/m);
    expect(ran.output.split('\n').filter((l) => l.trim() === '0')).toEqual([]);
  });
});
