import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver, Sandbox } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, sh, startDriver } from '../support/sandbox';
import { sandboxNetworks } from '../support/sandbox-network';

/** The daemon's pid: the one node process (pid 1 is tini, whose command line names agent.mjs too). */
async function daemonPidOf(sandbox: Sandbox): Promise<string> {
  const pids = await sh(
    sandbox,
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = node ] && basename $p; done',
  );
  return pids.trim().split('\n')[0] ?? '';
}

describe('sandbox hardening, read back from Docker and from inside', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let info: Awaited<ReturnType<ReturnType<SandboxDriver['docker']['getContainer']>['inspect']>>;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_hardening',
      repoDir: makeRepo(),
      limits: { memoryBytes: 512 * 1024 * 1024, cpus: 0.5, pids: 128 },
    });
    info = await driver.docker.getContainer(sandbox.info.containerId).inspect();
  });
  afterAll(async () => driver?.close());

  it("runs commands as an unprivileged user that is not the daemon's", async () => {
    expect(info.Config.User).toBe('0:0');
    expect((await sh(sandbox, 'id -u; id -g; id -G')).trim().split('\n')).toEqual(['10001', '10001', '10001']);
    const daemonPid = await daemonPidOf(sandbox);
    expect(daemonPid).toMatch(/^\d+$/);
    expect(await sh(sandbox, `grep -E '^Uid:' /proc/${daemonPid}/status`)).toMatch(/^Uid:\s+0\s+0\s+0\s+0/);
  });

  it('commands hold no capability; the daemon only the six it needs; no privilege gain for either', async () => {
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect([...((info.HostConfig.CapAdd as string[] | undefined) ?? [])].sort()).toEqual([
      'CHOWN',
      'DAC_OVERRIDE',
      'FOWNER',
      'KILL',
      'SETGID',
      'SETUID',
    ]);
    expect(info.HostConfig.Privileged).toBe(false);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    const status = await sh(sandbox, 'grep -E "^(CapEff|CapPrm|CapAmb|NoNewPrivs)" /proc/self/status');
    expect(status).toMatch(/CapEff:\s+0000000000000000/);
    expect(status).toMatch(/CapPrm:\s+0000000000000000/);
    expect(status).toMatch(/CapAmb:\s+0000000000000000/);
    expect(status).toMatch(/NoNewPrivs:\s+1/);
    // The daemon's set, read from its /proc status (world-readable; its memory and environment are not).
    const daemon = await sh(
      sandbox,
      'for p in /proc/[0-9]*; do grep -qa agent.mjs $p/cmdline 2>/dev/null && grep -E "^(CapEff|NoNewPrivs)" ' +
        '$p/status; done',
    );
    // CHOWN(0) DAC_OVERRIDE(1) FOWNER(3) KILL(5) SETGID(6) SETUID(7) = 0xeb
    expect(daemon).toMatch(/CapEff:\s+00000000000000eb/);
    expect(daemon).toMatch(/NoNewPrivs:\s+1/);
  });

  it('has a read-only root with a tmpfs scratch', async () => {
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(Object.keys(info.HostConfig.Tmpfs ?? {})).toEqual(['/tmp']);
    const denied = await run(sandbox, 'exec', { command: 'touch /usr/gatehouse-probe' });
    expect(denied.status).toBe('failed');
    expect(denied.output).toMatch(/Read-only file system/);
    expect(await sh(sandbox, 'touch /tmp/ok && echo scratch-ok')).toBe('scratch-ok\n');
    expect((await sh(sandbox, 'grep " /tmp " /proc/mounts')).split(' ')[2]).toBe('tmpfs');
  });

  it('applies memory, CPU and pids limits', async () => {
    expect(info.HostConfig.Memory).toBe(512 * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(512 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(0.5e9);
    expect(info.HostConfig.PidsLimit).toBe(128);
    // The kernel's view, from inside (cgroup v2 or v1, whichever this host has).
    const pidsMax = await sh(sandbox, 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max');
    expect(pidsMax.trim()).toBe('128');
  });

  it('has no Docker socket and mounts nothing from the host', async () => {
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    expect(info.Mounts.every((m) => m.Type === 'volume' || m.Type === 'tmpfs')).toBe(true);
    expect(info.Mounts.map((m) => m.Destination).sort()).toEqual(['/var/gatehouse', '/workspace']);
    expect(JSON.stringify(info)).not.toContain('docker.sock');
    const probe = await run(sandbox, 'exec', { command: 'ls -la /var/run/docker.sock /run/docker.sock' });
    expect(probe.status).toBe('failed');
    expect(probe.output).toMatch(/No such file or directory/);
  });

  it('is labelled with its run and sandbox, and attached only to its internal run network', async () => {
    expect(info.Config.Labels).toMatchObject({
      'gatehouse.role': 'sandbox',
      'gatehouse.run': 'run_hardening',
      'gatehouse.sandbox': sandbox.sandboxId,
    });
    expect(info.Config.Labels['gatehouse.owner']).toMatch(/:\d+:\d+$/);
    // A driver's first sandbox takes the network made ahead, joining its holder's namespace.
    const { networks, holder } = await sandboxNetworks(driver.docker, info);
    expect(holder, 'the first sandbox joins a network holder').toBeDefined();
    expect(info.NetworkSettings.Networks).toEqual({});
    expect(networks).toHaveLength(1);
    const net = await driver.docker.getNetwork(sandbox.info.networkId).inspect();
    expect(networks[0]).toBe(net.Name);
    expect(net.Internal).toBe(true);
    expect(net.Options?.['com.docker.network.bridge.inhibit_ipv4']).toBe('true');
    expect(net.Labels).toMatchObject({ 'gatehouse.role': 'run-network', 'gatehouse.sandbox': sandbox.sandboxId });
    // A network made ahead of its run (network-pool.ts) is its sandbox's alone and names no run;
    // one made at the sandbox's start names its run too.
    expect(net.Labels?.['gatehouse.run'] ?? 'run_hardening').toBe('run_hardening');
  });

  it('joins a holder that only holds the network: nobody, no capabilities, read-only, a few MiB', async () => {
    const { holder } = await sandboxNetworks(driver.docker, info);
    expect(holder!.Name).toBe(`/gatehouse-nethold-${sandbox.sandboxId}`);
    expect(holder!.Config.Labels).toMatchObject({
      'gatehouse.role': 'network-holder',
      'gatehouse.sandbox': sandbox.sandboxId,
    });
    expect(holder!.Config.User).toBe('65534:65534');
    expect(holder!.Path).toBe('sleep');
    expect(holder!.HostConfig.CapDrop).toEqual(['ALL']);
    expect(holder!.HostConfig.SecurityOpt).toEqual(['no-new-privileges']);
    expect(holder!.HostConfig.ReadonlyRootfs).toBe(true);
    expect(holder!.HostConfig.Memory).toBe(64 * 1024 * 1024);
    expect(holder!.HostConfig.PidsLimit).toBe(32);
    expect(holder!.HostConfig.Binds ?? []).toEqual([]);
    // The sandbox shares its network namespace only: not its processes.
    const names = await sh(sandbox, 'cat /proc/[0-9]*/comm 2>/dev/null; true');
    expect(names).toMatch(/^node$/m); // the daemon: what it sees are its own namespace's processes
    expect(names).not.toMatch(/^sleep$/m);
  });

  it('keeps its NATS credentials out of the environment and deletes the file once read', async () => {
    expect(info.Config.Env.join('\n')).not.toMatch(/NKEY|BEGIN NATS|eyJ/);
    const closed = await run(sandbox, 'exec', { command: 'ls /var/gatehouse/' });
    expect(closed.status).toBe('failed');
    expect(closed.output).toMatch(/Permission denied/);
    const asRoot = await rootExec(driver, sandbox, ['ls', '-la', '/var/gatehouse']);
    expect(asRoot.output).not.toContain('nats.creds');
    expect(asRoot.output).toMatch(/^drwx------\s+\d+\s+root\s+root\s.*\s\.$/m);
    // A cold start is bound on stdin: no identity or protect file was ever put in.
    expect(info.Config.Env).toContain('GATEHOUSE_BIND_VIA=stdin');
    expect(asRoot.output).not.toMatch(/identity\.json|protect\.json/);
  });

  it('takes its binding on a stdin commands cannot open, whose write end is closed once it is bound', async () => {
    expect(info.Config.OpenStdin).toBe(true);
    expect(info.Config.StdinOnce).toBe(true);
    const daemonPid = await daemonPidOf(sandbox);
    expect(daemonPid).toMatch(/^\d+$/);
    expect(daemonPid).not.toBe('1');
    // Writing a line of one's own into the daemon's stdin (or tini's): refused by the kernel.
    for (const pid of ['1', daemonPid]) {
      const attempt = await run(sandbox, 'exec', { command: `echo '{}' > /proc/${pid}/fd/0` });
      expect(attempt.status, `stdin of pid ${pid}`).toBe('failed');
      expect(attempt.output).toMatch(/Permission denied/);
    }
    // Root, around the daemon: a non-blocking read of that stdin finds end of file, not "no data
    // yet": nobody holds its write end any more (the attach ended; StdinOnce closed it).
    const read = await rootExec(driver, sandbox, [
      'sh',
      '-c',
      `dd if=/proc/${daemonPid}/fd/0 iflag=nonblock bs=1 count=1 2>&1; echo rc=$?`,
    ]);
    expect(read.output).toMatch(/0\+0 records in/);
    expect(read.output).toMatch(/rc=0/);
  });

  it('loaded its bundle through the code cache made for it, and logged when each start step was done', async () => {
    const logs = (await driver.docker.getContainer(sandbox.info.containerId).logs({ stdout: true, stderr: true }))
      .toString('latin1')
      .split('\n');
    const line = logs.find((l) => l.includes('"msg":"ready"')) ?? '';
    const ready = JSON.parse(line.slice(line.indexOf('{'))) as { codeCache?: string; bootMs?: Record<string, number> };
    expect(ready.codeCache).toBe('used');
    for (const step of ['bound', 'workspaceComplete', 'protected', 'connected', 'baseline', 'ready'])
      expect(ready.bootMs?.[step], step).toBeGreaterThan(0);
  });
});
