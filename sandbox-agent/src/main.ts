import { loadConfig } from './config';
import { startDaemon } from './daemon';
import { addProxyEnv, loadImageEnv } from './image-env';
import { log } from './log';
import { checkPrivileges } from './users';

/** How the bundle was loaded (images/sandbox/agent.mjs): through V8's code cache, or compiled afresh. */
export interface LoadedAs {
  codeCache: 'used' | 'rejected' | 'absent';
}

/** Entry point inside the sandbox container. Exits non-zero if it cannot serve. */
async function main(loaded: LoadedAs): Promise<void> {
  checkPrivileges();
  loadImageEnv();
  const cfg = await loadConfig(process.env);
  // Bound with the run (a pooled sandbox learns at claim whether its run has a way out).
  addProxyEnv(cfg.proxyEnv);
  const daemon = await startDaemon(cfg, loaded);
  const stop = (signal: string): void => {
    log('info', 'stopping', { signal });
    void daemon.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  void daemon.nc.closed().then((err) => {
    log(err ? 'error' : 'info', 'NATS connection closed', { err: err?.message });
    process.exit(err ? 1 : 0);
  });
}

/** Called by the entry point (images/sandbox/agent.mjs) once the bundle is loaded: nothing starts before. */
export function runDaemon(loaded: LoadedAs): void {
  main(loaded).catch((e: unknown) => {
    log('error', 'daemon failed to start', { err: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  });
}
