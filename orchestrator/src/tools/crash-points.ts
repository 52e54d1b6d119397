/**
 * Fault injection for the crash-safety tests: when GATEHOUSE_TEST_CRASH names a point, the process
 * kills itself there with SIGKILL — no cleanup, no final events — exactly like a power cut or
 * `kill -9` at that instant. Unset (always, outside those tests), this does nothing.
 */
export type CrashPoint = 'before-execution' | 'after-execution' | 'after-completion' | 'before-checkpoint-recorded';

export function crashPoint(point: CrashPoint): void {
  if (process.env.GATEHOUSE_TEST_CRASH === point) process.kill(process.pid, 'SIGKILL');
}
