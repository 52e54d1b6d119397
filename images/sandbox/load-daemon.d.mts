import type vm from 'node:vm';

/** See load-daemon.mjs. */
export function loadDaemon(
  dir: string,
  options?: { useCache?: boolean },
): { exports: Record<string, unknown>; script: vm.Script; codeCache: 'used' | 'rejected' | 'absent' };
