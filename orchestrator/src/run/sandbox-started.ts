import type { Sandbox } from '../sandbox/index';
import type { LogPort } from '../tools/ports';

/** Records `sandbox.started`: the sandbox, its image and timings, and what its copy-in withheld or protected. */
export function recordSandboxStarted(log: LogPort, sandbox: Sandbox, image: string): void {
  const { info } = sandbox;
  const withheld = info.withheld ?? [];
  log.append('sandbox.started', 'runtime', {
    sandboxId: sandbox.sandboxId,
    containerId: info.containerId,
    image,
    timings: info.timings,
    ...(withheld.length ? { withheld: withheld.slice(0, 200), withheldCount: withheld.length } : {}),
    ...(info.protectedPaths ? { protectedPaths: info.protectedPaths } : {}),
    ...(info.copyNotices?.length ? { notices: info.copyNotices.slice(0, 50) } : {}),
    ...(info.freshRepository ? { freshRepository: true } : {}),
    ...(info.freshRepositoryReason ? { freshRepositoryReason: info.freshRepositoryReason.slice(0, 1024) } : {}),
  });
}
