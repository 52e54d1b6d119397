import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, sandboxContainerOptions, workspaceVolumeOptions } from '../../src/sandbox/container';
import { limitsFromConfig } from '../../src/sandbox/limits';

const MB = 1024 * 1024;

describe('limitsFromConfig', () => {
  it('turns the config’s megabytes and counts into sandbox limits, leaving out what is not given', () => {
    expect(limitsFromConfig({ memoryMb: 512, cpus: 1.5, pids: 64, diskMb: 100 })).toEqual({
      memoryBytes: 512 * MB,
      cpus: 1.5,
      pids: 64,
      diskBytes: 100 * MB,
    });
    expect(limitsFromConfig({ cpus: 2 })).toEqual({ cpus: 2 });
    expect(limitsFromConfig({})).toEqual({});
  });

  it('refuses values that are not positive numbers, naming the key', () => {
    expect(() => limitsFromConfig({ memoryMb: 0 })).toThrow(/limits.memoryMb must be a positive number/);
    expect(() => limitsFromConfig({ diskMb: -1 })).toThrow(/limits.diskMb/);
    expect(() => limitsFromConfig({ cpus: Number.NaN })).toThrow(/limits.cpus/);
    expect(() => limitsFromConfig({ pids: 2.5 })).toThrow(/limits.pids must be a positive integer/);
  });
});

describe('container limits', () => {
  const spec = {
    image: 'x',
    runId: 'run_x',
    sandboxId: 'sbx_x',
    network: 'n',
    natsUrl: 'nats://n:4222',
    heartbeatMs: 1000,
  };

  it('gives the workspace a tmpfs of diskBytes owned by the command user, a plain volume without', () => {
    expect(workspaceVolumeOptions(DEFAULT_LIMITS)).toEqual({});
    const opts = workspaceVolumeOptions({ ...DEFAULT_LIMITS, diskBytes: 20 * MB });
    expect(opts).toMatchObject({ type: 'tmpfs', device: 'tmpfs' });
    expect(opts.o).toContain(`size=${20 * MB}`);
    expect(opts.o).toContain('uid=10001,gid=10001');
  });

  it('applies memory, CPUs and pids, and covers the image’s own VOLUMEs with bounded tmpfs', () => {
    const o = sandboxContainerOptions({
      ...spec,
      limits: { ...DEFAULT_LIMITS, memoryBytes: 300 * MB, cpus: 0.5, pids: 99 },
      imageVolumes: ['/data', '/workspace'],
    });
    expect(o.HostConfig?.Memory).toBe(300 * MB);
    expect(o.HostConfig?.MemorySwap).toBe(300 * MB);
    expect(o.HostConfig?.NanoCpus).toBe(5e8);
    expect(o.HostConfig?.PidsLimit).toBe(99);
    const withDisk = sandboxContainerOptions({
      ...spec,
      limits: { ...DEFAULT_LIMITS, memoryBytes: 300 * MB, diskBytes: 50 * MB },
    });
    expect(withDisk.HostConfig?.Memory).toBe(350 * MB);
    expect(Object.keys(o.HostConfig?.Tmpfs ?? {}).sort()).toEqual(['/data', '/tmp']);
    expect(o.Env).toContain('LD_PRELOAD=');
    expect(o.Env).toContain('NODE_OPTIONS=');
  });
});
