import net from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { sandboxSubjects } from '@gatehouse/shared';
import { sandboxCreds, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { run, sh, startDriver } from '../support/sandbox';
import { sandboxAddress } from '../support/sandbox-network';

/** A Node one-liner run inside a container: tries each address and prints which ones connected. */
const probeScript = (targets: string[], port: number): string =>
  `node -e '
const net = require("net");
const targets = ${JSON.stringify(targets)};
Promise.all(targets.map((host) => new Promise((resolve) => {
  const s = net.connect({ host, port: ${port}, timeout: 1500 });
  s.on("connect", () => { s.destroy(); resolve([host, "connected"]); });
  s.on("timeout", () => { s.destroy(); resolve([host, "timeout"]); });
  s.on("error", (e) => resolve([host, e.code]));
}))).then((r) => console.log(JSON.stringify(Object.fromEntries(r))));
'`;

describe('network isolation', () => {
  let driver: SandboxDriver;
  let a: Sandbox;
  let b: Sandbox;
  let listener: net.Server;
  let port: number;
  const accepted: string[] = [];

  beforeAll(async () => {
    driver = await startDriver();
    [a, b] = await Promise.all([
      driver.createSandbox({ runId: 'run_iso_a' }),
      driver.createSandbox({ runId: 'run_iso_b' }),
    ]);
    // Our own listener on every host address; the sandbox must reach none of them.
    listener = net.createServer((s) => {
      accepted.push(String(s.remoteAddress));
      // The probe hangs up as soon as it connects; the reset that follows is expected.
      s.on('error', () => undefined);
      s.end('host-listener\n');
    });
    await new Promise<void>((r) => listener.listen(0, '0.0.0.0', r));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    listener?.close();
    await driver?.close();
  });

  async function hostAddresses(): Promise<string[]> {
    const own = await driver.docker.getNetwork(a.info.networkId).inspect();
    const gateways = [...(own.IPAM?.Config ?? [])]
      .map((c: { Gateway?: string }) => c.Gateway)
      .filter((g): g is string => Boolean(g));
    const interfaces = Object.values(os.networkInterfaces())
      .flat()
      .filter((i): i is os.NetworkInterfaceInfo => Boolean(i) && i!.family === 'IPv4' && !i!.internal)
      .map((i) => i.address);
    return [...new Set([...gateways, ...interfaces])];
  }

  it('cannot reach a listener on the host, through any host address it could know', async () => {
    const targets = await hostAddresses();
    const docker0 = os.networkInterfaces().docker0?.find((i) => i.family === 'IPv4')?.address;
    const ownConfig: Array<{ Gateway?: string }> =
      (await driver.docker.getNetwork(a.info.networkId).inspect()).IPAM?.Config ?? [];
    const ownGateway = ownConfig[0]?.Gateway;
    expect(docker0).toBeTruthy();
    expect(ownGateway).toBeTruthy();
    expect(targets).toContain(docker0);
    expect(targets).toContain(ownGateway);
    const result = JSON.parse(await sh(a, probeScript(targets, port), 30_000)) as Record<string, string>;
    expect(Object.keys(result).sort()).toEqual([...targets].sort());
    for (const outcome of Object.values(result)) expect(outcome).not.toBe('connected');
    expect(accepted).toEqual([]);
  });

  it('positive control: a container on a plain bridge network does reach that listener', async () => {
    // docker0's own address: the default bridge's IPAM does not always report its gateway.
    const gateway = os.networkInterfaces().docker0?.find((i) => i.family === 'IPv4')?.address;
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const container = await driver.docker.createContainer({
      Image: driver.images.sandbox,
      Entrypoint: ['bash', '-c'],
      Cmd: [probeScript([gateway!], port)],
      HostConfig: { NetworkMode: 'bridge' },
      Labels: { 'gatehouse.role': 'test-control' },
    });
    try {
      await container.start();
      await container.wait();
      const logs = (await container.logs({ stdout: true, stderr: true })).toString('utf8');
      expect(logs).toContain('"connected"');
    } finally {
      await container.remove({ force: true });
    }
    expect(accepted.length).toBeGreaterThan(0);
  });

  it("cannot reach another run's container, which can reach itself", async () => {
    // B may have joined a network holder (the run network made ahead): its address is then the holder's.
    const bIp = await sandboxAddress(driver.docker, await driver.docker.getContainer(b.info.containerId).inspect());
    expect(bIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const server = new AbortController();
    // A listener inside B, alive for the length of this test.
    const serving = run(
      b,
      'exec',
      { command: `node -e 'require("net").createServer((s) => s.end("b\\n")).listen(7000, "0.0.0.0")'` },
      { timeoutMs: 30_000, signal: server.signal },
    );
    try {
      let self: Record<string, string> = {};
      for (let i = 0; i < 20 && self[bIp!] !== 'connected'; i++) {
        self = JSON.parse(await sh(b, probeScript([bIp!], 7000))) as Record<string, string>;
      }
      expect(self[bIp!]).toBe('connected'); // the listener is up and reachable on its own network
      const fromA = JSON.parse(await sh(a, probeScript([bIp!], 7000), 30_000)) as Record<string, string>;
      expect(fromA[bIp!]).not.toBe('connected');
    } finally {
      server.abort();
      await serving;
    }
  });

  it('fails lookups of external names promptly instead of hanging on an unreachable resolver', async () => {
    const r = await run(
      a,
      'exec',
      { command: 'getent hosts gatehouse-nonexistent.invalid; echo "exit=$?"' },
      { timeoutMs: 15_000 },
    );
    expect(r.output).toContain('exit=2');
    expect(r.durationMs).toBeLessThan(10_000);
  });
});

describe('NATS credentials are scoped to their own run', () => {
  let driver: SandboxDriver;
  let a: Sandbox;
  let b: Sandbox;
  let asA: NatsConnection;
  const errors: string[] = [];

  beforeAll(async () => {
    driver = await startDriver();
    [a, b] = await Promise.all([
      driver.createSandbox({ runId: 'run_creds_a' }),
      driver.createSandbox({ runId: 'run_creds_b' }),
    ]);
    // The exact credentials sandbox A gets, used from the test process.
    const creds = await sandboxCreds(driver.nats.identity, a.runId, a.sandboxId);
    asA = await connect({
      servers: driver.nats.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    });
    void (async () => {
      for await (const s of asA.status())
        if (String(s.type) === 'error') errors.push(typeof s.data === 'string' ? s.data : JSON.stringify(s.data));
    })();
  });
  afterAll(async () => {
    await asA?.close();
    await driver?.close();
  });

  const settle = () => new Promise((r) => setTimeout(r, 1200));

  it("cannot subscribe to another run's subjects", async () => {
    const bSubjects = sandboxSubjects(b.runId, b.sandboxId);
    const received: string[] = [];
    const denied: string[] = [];
    const subjects = [bSubjects.heartbeat, bSubjects.invoke, bSubjects.all, 'gh.>', '>'];
    for (const subject of subjects) {
      asA.subscribe(subject, {
        callback: (err, msg) => {
          if (err) denied.push(subject);
          else received.push(msg.subject);
        },
      });
    }
    // B heartbeats every 500 ms and the orchestrator publishes on B's invoke subject: nothing may arrive.
    driver.nc.publish(bSubjects.invoke, new TextEncoder().encode('{}'));
    await settle();
    expect(received).toEqual([]);
    // Every one of the subscriptions was refused by the server, not merely quiet.
    expect(denied.sort()).toEqual([...subjects].sort());
  });

  it("cannot publish on another run's subjects, nor send invocations to itself", async () => {
    const bSubjects = sandboxSubjects(b.runId, b.sandboxId);
    const aSubjects = sandboxSubjects(a.runId, a.sandboxId);
    const seen: string[] = [];
    const watch = driver.nc.subscribe('gh.>', {
      callback: (_e, m) => m.data.length > 0 && new TextDecoder().decode(m.data) === 'forged' && seen.push(m.subject),
    });
    await driver.nc.flush();
    for (const subject of [
      bSubjects.invoke,
      bSubjects.heartbeat,
      bSubjects.output('inv_x'),
      aSubjects.invoke,
      aSubjects.cancel,
    ]) {
      asA.publish(subject, new TextEncoder().encode('forged'));
    }
    // Control: what A may publish does arrive, so the watcher works.
    asA.publish(aSubjects.heartbeat, new TextEncoder().encode('forged'));
    await asA.flush();
    await settle();
    watch.unsubscribe();
    expect(seen).toEqual([aSubjects.heartbeat]);
    // nats.js reports a publish the server refused as a status event carrying the error code.
    expect(errors).toContain('PERMISSIONS_VIOLATION');
  });

  it('can still do its own job: receive its invocations', async () => {
    const own = await connect({
      servers: driver.nats.url,
      authenticator: credsAuthenticator(
        new TextEncoder().encode(await sandboxCreds(driver.nats.identity, a.runId, a.sandboxId)),
      ),
    });
    try {
      const got: string[] = [];
      own.subscribe(sandboxSubjects(a.runId, a.sandboxId).invoke, {
        callback: (_e, m) => got.push(new TextDecoder().decode(m.data)),
      });
      await own.flush();
      driver.nc.publish(sandboxSubjects(a.runId, a.sandboxId).invoke, new TextEncoder().encode('hello'));
      await settle();
      expect(got).toContain('hello');
    } finally {
      await own.close();
    }
  });
});
