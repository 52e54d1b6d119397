import path from 'node:path';
import { SandboxError } from './errors';

/**
 * Folders root's processes in a sandbox read programs, libraries or configuration from (the
 * loader's /etc/ld.so.preload, OpenSSL's /etc/ssl, git's /etc/gitconfig, the runtime itself), and
 * the kernel's. A toolchain image's VOLUME becomes a writable scratch in the sandbox (container.ts),
 * which over one of these would let commands change what root runs there.
 */
const SYSTEM = ['/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/boot', '/root'];
const OURS = ['/opt/gatehouse', '/var/gatehouse', '/proc', '/sys', '/dev'];

/** Throws, naming every one, when an image declares a VOLUME over or above such a folder. */
export function checkDeclaredVolumes(image: string, volumes: readonly string[]): void {
  const bad = volumes.filter((v) => {
    const p = path.posix.normalize(`/${v}`).replace(/(.)\/+$/, '$1');
    const within = (dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
    const above = (dir: string): boolean => p === '/' || dir.startsWith(`${p}/`);
    return [...SYSTEM, ...OURS].some(within) || OURS.some(above);
  });
  if (bad.length > 0)
    throw new SandboxError(
      `toolchain image ${image} declares VOLUME ${bad.join(', ')}: a sandbox gets a writable scratch ` +
        'over each declared volume, and over a system folder that would let commands change what root ' +
        'runs in the sandbox; remove that VOLUME from the image (or derive one without it) and run again',
    );
}
