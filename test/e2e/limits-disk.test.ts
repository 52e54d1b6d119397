import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitsFromConfig, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

const MB = 1024 * 1024;

describe('limits from the project config: memory, CPUs, pids and disk', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_limits_disk',
      repoDir: makeRepo(),
      limits: limitsFromConfig({ memoryMb: 384, cpus: 0.5, pids: 100, diskMb: 24 }),
    });
  });
  afterAll(async () => driver?.close());

  it('applies memory (plus the workspace, which tmpfs charges to it), CPUs and pids', async () => {
    const info = await driver.docker.getContainer(sandbox.info.containerId).inspect();
    expect(info.HostConfig.Memory).toBe((384 + 24) * MB);
    expect(info.HostConfig.MemorySwap).toBe((384 + 24) * MB);
    expect(info.HostConfig.NanoCpus).toBe(5e8);
    expect(info.HostConfig.PidsLimit).toBe(100);
    expect(await sh(sandbox, 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max')).toBe(
      '100\n',
    );
  });

  it('gives /workspace diskMb: the repository is there, a write past the limit fails with ENOSPC', async () => {
    expect(await sh(sandbox, 'git log --format=%s; stat -c %u /workspace')).toBe('fixture\n10001\n');
    const df = await sh(sandbox, "df -k --output=fstype,size /workspace | tail -1 | tr -s ' '");
    const [fstype, sizeKb] = df.trim().split(' ');
    expect(fstype).toBe('tmpfs');
    expect(Number(sizeKb)).toBe(24 * 1024);
    expect(await sh(sandbox, 'head -c 8M /dev/zero > ok.bin && stat -c %s ok.bin')).toBe(`${8 * MB}\n`);
    const over = await run(sandbox, 'exec', { command: 'head -c 32M /dev/zero > big.bin' });
    expect(over.status).not.toBe('ok');
    expect(over.output).toMatch(/No space left on device/);
    // The rest of the sandbox keeps working, and the baseline still reads the workspace.
    await sh(sandbox, 'rm -f big.bin');
    const changes = await sandbox.changes();
    expect(changes.files.map((f) => f.path)).toEqual(['ok.bin']);
  });
});
