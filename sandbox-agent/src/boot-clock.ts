/**
 * When each step of the daemon's start was done, in ms since the process began (node's own start
 * and the bundle's load included): logged with `ready`, to see what a cold start waits for.
 */
export function bootClock(boundAtMs: number) {
  const ms: Record<string, number> = { bound: Math.round(boundAtMs) };
  return { ms, mark: (step: string) => void (ms[step] = Math.round(performance.now())) };
}
