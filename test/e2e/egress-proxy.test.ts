import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureEgressNetwork,
  egressNetworkGateway,
  ensureImages,
  reapOrphans,
  startEgressProxy,
  type EgressDecision,
  type EgressProxy,
  type Sandbox,
  type SandboxDriver,
} from '@gatehouse/orchestrator';
import { newId } from '@gatehouse/shared';
import { probeProgram, startTargetContainer, type ProbeResult } from '../support/egress';
import { sandboxNetworks } from '../support/sandbox-network';
import { sh, startDriver } from '../support/sandbox';

/**
 * The egress proxy for real: a sandbox on its internal run network, the proxy joining that network
 * and the outside one, two listener containers on the outside network and one listener of this
 * process on the outside network's gateway address. Every target is the test's own.
 */
describe('egress proxy (real Docker)', () => {
  // Unique per test run: other checkouts may run this file on the same engine.
  const runId = newId('run');
  const orphanRunId = newId('run');
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let proxy: EgressProxy | undefined;
  let hostListener: http.Server;
  let hostPort: number;
  let gateway: string;
  const hostSeen: string[] = [];
  const decisions: EgressDecision[] = [];
  const problems: string[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  let allowed: Awaited<ReturnType<typeof startTargetContainer>>;
  let denied: Awaited<ReturnType<typeof startTargetContainer>>;
  let results: ProbeResult[];

  beforeAll(async () => {
    driver = await startDriver();
    const images = await ensureImages({ prune: false });
    sandbox = await driver.createSandbox({ runId });
    const outside = await ensureEgressNetwork(driver.docker);
    allowed = await startTargetContainer(driver.docker, images.sandbox, outside, 'allowed');
    cleanup.push(() => allowed.remove());
    denied = await startTargetContainer(driver.docker, images.sandbox, outside, 'denied');
    cleanup.push(() => denied.remove());
    gateway = await egressNetworkGateway(driver.docker);
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    hostListener = http.createServer((req, res) => {
      hostSeen.push(req.url ?? '');
      res.setHeader('connection', 'close');
      res.end(`host ${req.url}`);
    });
    await new Promise<void>((r) => hostListener.listen(0, gateway, r));
    hostPort = (hostListener.address() as net.AddressInfo).port;

    proxy = await startEgressProxy(driver.docker, {
      runId,
      network: driver.docker.getNetwork(sandbox.info.networkId),
      phase: 'setup',
      image: images.egress,
      // The allowed target by name, with its private address listed literally; the denied one by
      // name only; the host listener by its address.
      allow: [`${allowed.alias}:8080`, `${allowed.address}:8080`, `${denied.alias}:8080`, `${gateway}:${hostPort}`],
      deny: [],
      onDecision: (d) => decisions.push(d),
      onProblem: (m) => problems.push(m),
    });
    expect(proxy.proxyUrl).toBe('http://gatehouse-egress:3128');
    const program = probeProgram({ host: 'gatehouse-egress', port: 3128 }, [
      { kind: 'forward', target: `http://${allowed.alias}:8080/by-forward` },
      { kind: 'connect', target: `${allowed.alias}:8080` },
      { kind: 'forward', target: `http://${denied.alias}:8080/private-by-name` },
      { kind: 'connect', target: `${denied.address}:8080` },
      { kind: 'forward', target: `http://${gateway}:${hostPort}/host-literal` },
      { kind: 'direct', target: `${allowed.address}:8080` },
      { kind: 'direct', target: `${denied.address}:8080` },
      { kind: 'direct', target: `${gateway}:${hostPort}` },
    ]);
    results = JSON.parse(await sh(sandbox, program, 60_000)) as ProbeResult[];
  }, 240_000);

  afterAll(async () => {
    await proxy?.stop();
    for (const c of cleanup) await c().catch(() => undefined);
    hostListener?.close();
    await driver?.close();
  });

  it('reaches the allowed listener through the proxy, by forward and by CONNECT', () => {
    expect(results[0]).toEqual({ status: 200, body: 'allowed /by-forward' });
    expect(results[1]).toEqual({ status: 200, body: 'allowed /tunnelled' });
  });

  it('is denied a name that resolves to a private address not listed literally, and an unlisted address', () => {
    expect(results[2]?.status).toBe(403);
    expect(results[2]?.body).toMatch(/resolves to a private address .* not listed literally/);
    expect(results[3]?.status).toBe(403);
    expect(results[3]?.body).toMatch(/address not on the allowlist/);
  });

  it('reaches a host listener listed by its address', () => {
    expect(results[4]).toEqual({ status: 200, body: 'host /host-literal' });
    expect(hostSeen).toEqual(['/host-literal']);
  });

  it('cannot reach any of them directly', () => {
    for (const r of results.slice(5)) expect(r.direct).not.toBe('connected');
    expect(results.slice(5)).toHaveLength(3);
  });

  it('reports every decision, parsed, and nothing else', () => {
    expect(problems).toEqual([]);
    expect(decisions).toEqual([
      { event: 'egress.allowed', host: allowed.alias, port: 8080, phase: 'setup', address: allowed.address },
      { event: 'egress.allowed', host: allowed.alias, port: 8080, phase: 'setup', address: allowed.address },
      {
        event: 'egress.denied',
        host: denied.alias,
        port: 8080,
        phase: 'setup',
        address: denied.address,
        reason: `resolves to a private address (${denied.address}) that is not listed literally`,
      },
      {
        event: 'egress.denied',
        host: denied.address,
        port: 8080,
        phase: 'setup',
        reason: 'address not on the allowlist',
      },
      { event: 'egress.allowed', host: gateway, port: hostPort, phase: 'setup', address: gateway },
    ]);
  });

  it('runs hardened: unprivileged, no capabilities, read-only, limited', async () => {
    const info = await driver.docker.getContainer(proxy!.containerId).inspect();
    expect(info.Config.User).toBe('10003:10003');
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toEqual(['no-new-privileges']);
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Memory).toBe(128 * 1024 * 1024);
    expect(info.HostConfig.PidsLimit).toBe(32);
    expect(info.Config.Labels).toMatchObject({ 'gatehouse.role': 'egress-proxy', 'gatehouse.run': runId });
    // The sandbox itself is still on its internal network alone.
    const sbx = await driver.docker.getContainer(sandbox.info.containerId).inspect();
    expect((await sandboxNetworks(driver.docker, sbx)).networks).toHaveLength(1);
  });

  it("refuses a second phase's proxy while the first is still on the run network", async () => {
    const before = await driver.docker.listContainers({
      all: true,
      filters: { label: ['gatehouse.role=egress-proxy', `gatehouse.run=${runId}`] },
    });
    await expect(
      startEgressProxy(driver.docker, {
        runId,
        network: driver.docker.getNetwork(sandbox.info.networkId),
        phase: 'agent',
        allow: ['example.invalid'],
        image: (await ensureImages({ prune: false })).egress,
        onDecision: () => undefined,
      }),
    ).rejects.toThrow(/is still on gatehouse-net-.*stop the previous phase's proxy first/);
    const after = await driver.docker.listContainers({
      all: true,
      filters: { label: ['gatehouse.role=egress-proxy', `gatehouse.run=${runId}`] },
    });
    expect(after.map((c) => c.Id).sort()).toEqual(before.map((c) => c.Id).sort());
  });

  it('stops and removes the proxy; the reaper removes an orphaned one', async () => {
    const id = proxy!.containerId;
    await proxy!.stop();
    proxy = undefined;
    await expect(driver.docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const orphan = await startEgressProxy(driver.docker, {
      runId: orphanRunId,
      network: driver.docker.getNetwork(sandbox.info.networkId),
      phase: 'agent',
      allow: ['example.invalid'],
      image: (await ensureImages({ prune: false })).egress,
      onDecision: () => undefined,
      onProblem: () => undefined,
    });
    const report = await reapOrphans(driver.docker, true, { runId: orphanRunId });
    expect(report.containers).toHaveLength(1);
    await expect(driver.docker.getContainer(orphan.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await orphan.stop();
  });

  it('refuses bad lists before creating anything, listing every problem', async () => {
    await expect(
      startEgressProxy(driver.docker, {
        runId: 'run_egress_bad',
        network: driver.docker.getNetwork(sandbox.info.networkId),
        phase: 'setup',
        allow: ['https://registry.example.invalid', 'a.*.example'],
        deny: ['x y'],
        onDecision: () => undefined,
      }),
    ).rejects.toThrow(/allow entry 1 .*scheme[\s\S]*allow entry 2 .*wildcard[\s\S]*deny entry 1 .*white space/);
  });
});
