import net from 'node:net';

/** Whether this process is a queue worker's run child (queue/run-child.ts sets the link's descriptor). */
export function startedByWorker(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GATEHOUSE_WORKER_LINK !== undefined;
}

/**
 * A run a worker started (queue/run-child.ts) holds one end of a pipe whose other end only the
 * worker has. The pipe closing means the worker died: its lease on the run stops being renewed and
 * another worker will take the run over, so this process must not execute one more step. It kills
 * itself outright, as a crash would (its sandboxes are left to the reaper), rather than wind down.
 */
export function watchWorkerLink(env: NodeJS.ProcessEnv = process.env): void {
  const fd = Number(env.GATEHOUSE_WORKER_LINK);
  if (!Number.isInteger(fd) || fd < 3) return;
  let link: net.Socket;
  try {
    link = new net.Socket({ fd, readable: true, writable: false });
  } catch {
    // No such descriptor: started by hand with the variable set. Nothing to watch.
    return;
  }
  const gone = (): void => void process.kill(process.pid, 'SIGKILL');
  link.on('end', gone);
  link.on('close', gone);
  link.on('error', gone);
  // A stopped worker (SIGSTOP, a frozen host) keeps the pipe open but stops beating on it, and stops
  // renewing its lease: silence for the worker's deadline (set below its lease TTL) counts as death.
  const silentMs = Number(env.GATEHOUSE_WORKER_LINK_MS);
  if (Number.isFinite(silentMs) && silentMs > 0) {
    let heardAt = Date.now();
    // After a pause of this process itself (its event loop blocked by a long synchronous step, a
    // starved machine), the timer fires before the poll phase has read the beats waiting in the
    // pipe: they are read first (setImmediate runs after the poll), and only silence kills.
    const deadline = setTimeout(() => setImmediate(() => Date.now() - heardAt >= silentMs && gone()), silentMs);
    deadline.unref();
    link.on('data', () => {
      heardAt = Date.now();
      deadline.refresh();
    });
  }
  link.resume();
  // Watching must not keep the run alive once it is done.
  link.unref();
}
