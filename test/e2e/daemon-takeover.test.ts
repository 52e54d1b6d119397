import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionHash, newId } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { invocation, makeRepo, rootExec, run, sendRaw, sh, startDriver } from '../support/sandbox';

/**
 * Issue 10, break 1: code a command starts (a test the agent runs, say) attacks the daemon from
 * inside the sandbox — its memory, environment, files and credentials, signals, NATS — and then
 * someone holding the orchestrator's own NATS credentials tries to make the daemon run something.
 * On the code before process separation the scan read the daemon's environment and memory maps
 * and SIGSTOP froze it; here every attempt fails and the run goes on.
 */

/** Runs as the command user inside the sandbox; prints one JSON report. */
const ATTACK = String.raw`
const fs = require('fs');
const net = require('net');
const me = process.pid;
const report = { procs: {}, files: {}, secretsFound: [], nats: null };
const uidOf = (pid) => {
  try { return Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8'))[1]); }
  catch { return -1; }
};
const tryIt = (f) => { try { return f(); } catch (e) { return e.code || String(e); } };
for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
  const isDaemon = (() => {
    try { return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').includes('agent.mjs'); } catch { return false; }
  })();
  // Every other user's process, and the daemon whatever its user (before process separation it had ours).
  if (Number(pid) === me || (!isDaemon && uidOf(pid) === process.getuid())) continue;
  const base = '/proc/' + pid + '/';
  report.procs[pid] = {
    cmdline: tryIt(() => fs.readFileSync(base + 'cmdline', 'utf8').replace(/\0/g, ' ').trim()),
    environ: tryIt(() => {
      const t = fs.readFileSync(base + 'environ', 'utf8');
      if (/\bSU[A-Z2-7]{56}\b|eyJ0eXAiOiJKV1Qi/.test(t)) report.secretsFound.push(base + 'environ');
      return 'read';
    }),
    maps: tryIt(() => (fs.readFileSync(base + 'maps', 'utf8').length ? 'read' : 'empty')),
    mem: tryIt(() => {
      const fd = fs.openSync(base + 'mem', 'r');
      const b = Buffer.alloc(16);
      fs.readSync(fd, b, 0, 16, 0x400000);
      return 'opened';
    }),
    fd: tryIt(() => (fs.readdirSync(base + 'fd').length >= 0 ? 'listed' : '')),
    cwd: tryIt(() => (fs.readdirSync(base + 'cwd/').length >= 0 ? 'listed' : '')),
    stop: tryIt(() => { process.kill(Number(pid), 'SIGSTOP'); process.kill(Number(pid), 'SIGCONT'); return 'sent'; }),
    kill0: tryIt(() => { process.kill(Number(pid), 0); return 'allowed'; }),
  };
}
for (const f of ['/var/gatehouse', '/var/gatehouse/nats.creds', '/var/gatehouse/invoke.pub',
  '/var/gatehouse/baseline.tree', '/var/gatehouse/baseline.git/config']) {
  report.files[f] = tryIt(() =>
    (fs.statSync(f).isDirectory() ? (fs.readdirSync(f), 'listed') : (fs.readFileSync(f), 'read')));
}
// Anything that looks like credentials (an nkey user seed, a NATS JWT), anywhere a command can read.
const walk = (dir, depth) => {
  if (depth > 6) return;
  let names; try { names = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const n of names) {
    const p = dir + '/' + n.name;
    if (n.isDirectory()) walk(p, depth + 1);
    else if (n.isFile() && p !== '/tmp/attack.js') {
      try {
        const t = fs.readFileSync(p, 'utf8');
        if (/\bSU[A-Z2-7]{56}\b|eyJ0eXAiOiJKV1Qi[A-Za-z0-9_-]+\.eyJ/.test(t)) report.secretsFound.push(p);
      } catch {}
    }
  }
};
for (const d of ['/tmp', '/workspace', '/var', '/opt', '/etc', '/root', '/run']) walk(d, 0);
// NATS with what was found (nothing): the server must refuse an anonymous client.
const sock = net.connect(4222, process.env.NATS_HOST);
let got = '';
const done = () => {
  report.nats = got.split('\r\n').filter((l) => !l.startsWith('INFO')).join(' ').trim();
  console.log(JSON.stringify(report));
  process.exit(0);
};
sock.on('data', (d) => { got += d; if (/-ERR|PONG/.test(got)) { sock.destroy(); done(); } });
sock.on('connect', () => sock.write('CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n'));
sock.on('error', (e) => { got += 'socket error ' + e.code; done(); });
setTimeout(() => { got += ' timeout'; done(); }, 5000);
`;

describe('a command cannot take over the daemon', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let natsHost: string;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
    const net = await driver.docker.getNetwork(sandbox.info.networkId).inspect();
    const nats = Object.values(net.Containers ?? {}).find(
      (c) => c.Name === driver.nats.container || c.Name?.includes('nats'),
    );
    natsHost = (nats?.IPv4Address ?? '').split('/')[0] ?? '';
    expect(natsHost).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
  afterAll(async () => driver?.close());

  it("scans /proc, the daemon's files and NATS from inside: every attempt fails, and the run goes on", async () => {
    await sh(sandbox, `cat > /tmp/attack.js <<'EOF_ATTACK'\n${ATTACK}\nEOF_ATTACK`);
    const out = await run(
      sandbox,
      'exec',
      { command: 'node /tmp/attack.js', env: { NATS_HOST: natsHost } },
      { timeoutMs: 30_000 },
    );
    expect(out.status, out.output).toBe('ok');
    const report = JSON.parse(out.output) as {
      procs: Record<string, Record<string, string>>;
      files: Record<string, string>;
      secretsFound: string[];
      nats: string;
    };
    const daemon = Object.values(report.procs).find((p) => p.cmdline?.includes('agent.mjs'));
    expect(daemon, JSON.stringify(report.procs)).toBeDefined();
    for (const [pid, p] of Object.entries(report.procs)) {
      // The cmdline of every process is public on Linux; nothing else of another user's is.
      expect({ pid, environ: p.environ, maps: p.maps, mem: p.mem, fd: p.fd, cwd: p.cwd }).toEqual({
        pid,
        environ: 'EACCES',
        maps: 'EACCES',
        mem: 'EACCES',
        fd: 'EACCES',
        cwd: 'EACCES',
      });
      expect({ pid, stop: p.stop, kill0: p.kill0 }).toEqual({ pid, stop: 'EPERM', kill0: 'EPERM' });
    }
    expect(Object.values(report.files)).toEqual(['EACCES', 'EACCES', 'EACCES', 'EACCES', 'EACCES']);
    expect(report.secretsFound).toEqual([]);
    expect(report.nats).toMatch(/-ERR 'Authorization Violation'/);
    // The daemon was never stopped: it answers, and the sandbox was not declared lost.
    expect(await sh(sandbox, 'echo still-here')).toBe('still-here\n');
    expect(sandbox.lost).toBeUndefined();
  });

  it(
    'a command that leaves its process group is killed after the call, ' + 'and cannot kill the daemon on its way',
    async () => {
      const r = await run(sandbox, 'exec', {
        command: 'setsid sh -c "sleep 30" >/dev/null 2>&1 < /dev/null & kill -9 -1; echo done',
      });
      expect(r.output).toContain('done');
      const left = await rootExec(driver, sandbox, [
        'sh',
        '-c',
        'for p in /proc/[0-9]*; do grep -q "^Uid:\\s*10001" $p/status 2>/dev/null && cat $p/cmdline && echo; done',
      ]);
      expect(left.output.trim()).toBe('');
      expect(await sh(sandbox, 'echo alive')).toBe('alive\n');
    },
  );

  it(
    "holding the orchestrator's NATS credentials is not enough: unsigned or wrongly signed invocations " +
      'run nothing',
    async () => {
      const input = { command: 'touch /workspace/pwned' };
      const unsigned = invocation(sandbox, 'exec', input);
      const refusedUnsigned = await sendRaw(driver, sandbox, unsigned, { unsigned: true });
      expect(refusedUnsigned.status).toBe('rejected');
      expect(refusedUnsigned.error?.code).toBe('signature_invalid');
      // A signature with some other key over exactly this message.
      const { invocationKeys, signMessage } = await import('@gatehouse/shared');
      const forged = { ...unsigned, signature: signMessage(unsigned, invocationKeys().privateKey) };
      expect((await sendRaw(driver, sandbox, forged, { unsigned: true })).error?.code).toBe('signature_invalid');
      // A properly signed invocation whose input was changed afterwards (same approval hash kept).
      const signed = invocation(sandbox, 'exec', { command: 'true' });
      const good = { ...signed, signature: sandbox.sign(signed) };
      const tampered = {
        ...good,
        input,
        approval: { id: 'test', actionHash: actionHash({ name: 'exec', input }), by: 'runtime' },
      };
      expect((await sendRaw(driver, sandbox, tampered, { unsigned: true })).error?.code).toBe('signature_invalid');
      // Replayed as it was signed, it runs once, and again only as the recorded result.
      expect((await sendRaw(driver, sandbox, good, { unsigned: true })).status).toBe('ok');
      expect((await sendRaw(driver, sandbox, good, { unsigned: true })).replayed).toBe(true);
      expect((await rootExec(driver, sandbox, ['ls', '/workspace/pwned'])).exitCode).not.toBe(0);
    },
  );
});
