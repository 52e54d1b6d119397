// The egress proxy program (images/egress): the only way out of a sandbox. One process per run
// phase, configured at start, stopped after its phase. Decisions are JSON lines on stdout; the
// orchestrator reads them from the container's log. Node's own modules only.
import type { EgressDecision, EgressListening } from '@gatehouse/shared/egress';
import { readProxyConfig } from './proxy-config';
import { startProxyServer } from './proxy-server';

const line = (v: EgressDecision | EgressListening): void => {
  process.stdout.write(`${JSON.stringify(v)}\n`);
};

const read = readProxyConfig(process.env);
if ('errors' in read) {
  process.stderr.write(`gatehouse egress proxy: bad configuration:\n${read.errors.map((e) => `  ${e}\n`).join('')}`);
  process.exit(2);
}
const { config } = read;
const server = await startProxyServer(
  {
    policy: config.policy,
    phase: config.phase,
    log: line,
    selfNames: config.selfNames,
    ...(config.clients ? { clients: config.clients } : {}),
  },
  { host: '0.0.0.0', port: config.port },
);
line({ event: 'egress.listening', port: server.port, phase: config.phase });

const stop = (): void => {
  void server.close().then(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
