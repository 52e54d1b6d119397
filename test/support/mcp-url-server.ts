import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port';
import { REFERENCE_SERVERS } from './mcp-servers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Preloaded into the server's process (`node -r`): the package's server listens with `app.listen(PORT)`,
 * every interface, and takes no host; this makes a listen on a bare port listen on 127.0.0.1 only,
 * and writes one stderr line per connection and per request it accepts, so a test can count what
 * reached the server. The server's own code runs unchanged.
 */
const PRELOAD = String.raw`
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if ((typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) && typeof args[1] !== 'string')
    args.splice(1, 0, '127.0.0.1');
  const say = (line) => process.stderr.write('gh-test: ' + line + '\n');
  this.on('listening', () => say('listening ' + JSON.stringify(this.address())));
  this.on('connection', () => say('connection'));
  this.on('request', (req) => say('request ' + req.method + ' ' + req.url));
  return listen.apply(this, args);
};
`;

/** `@modelcontextprotocol/server-everything` in its streamable HTTP mode, a child process on loopback. */
export interface EverythingHttp {
  port: number;
  /** Its MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** How many HTTP requests and TCP connections reached it so far. */
  requests(): number;
  connections(): number;
  /** What it wrote (stdout and stderr), the last 40 000 characters. */
  output(): string;
  close(): Promise<void>;
}

/** Starts the server (`node dist/index.js streamableHttp`, its port from PORT) and waits, bounded, until it listens. */
export async function startEverythingHttp(startMs = 20_000): Promise<EverythingHttp> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-http-'));
  const preload = path.join(dir, 'loopback.cjs');
  writeFileSync(preload, PRELOAD);
  const entry = path.join(ROOT, 'node_modules', REFERENCE_SERVERS.everything, 'dist', 'index.js');
  let lastError = '';
  // A port found free can be taken before the server binds it: try again with another.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    // Its output goes to a file, not a pipe: the tests run the CLI with spawnSync, which blocks this
    // event loop, so a pipe would not be read (and a full one would stall the server) meanwhile.
    const file = path.join(dir, `output-${attempt}.log`);
    const fd = openSync(file, 'w');
    const child = spawn(process.execPath, ['-r', preload, entry, 'streamableHttp'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const out = (): string => readFileSync(file, 'utf8').slice(-40_000);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const listening = await waitForListening(child, out, port, startMs);
    if (listening) {
      const count = (re: RegExp): number => (readFileSync(file, 'utf8').match(re) ?? []).length;
      return {
        port,
        url: `http://127.0.0.1:${port}/mcp`,
        requests: () => count(/^gh-test: request /gm),
        connections: () => count(/^gh-test: connection$/gm),
        output: out,
        close: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    lastError = out();
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`server-everything did not listen on 127.0.0.1:\n${lastError}`);
}

/** Until the server says it listens on 127.0.0.1:port (true), exits or `ms` pass (false). */
async function waitForListening(child: ChildProcess, out: () => string, port: number, ms: number): Promise<boolean> {
  const expected = `gh-test: listening ${JSON.stringify({ address: '127.0.0.1', family: 'IPv4', port })}`;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (out().includes(expected)) return true;
    if (child.exitCode !== null || child.signalCode !== null) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
