import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The gatehouse checkout this code runs from (it holds images/). Found by walking up, because the
 * same code runs bundled (orchestrator/dist) and from source (vitest).
 */
export function projectRoot(): string {
  if (process.env.GATEHOUSE_HOME_DIR) return process.env.GATEHOUSE_HOME_DIR;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 10; i++) {
    if (existsSync(path.join(dir, 'images', 'sandbox', 'assemble-runtime.sh'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the gatehouse checkout (images/sandbox/assemble-runtime.sh); set GATEHOUSE_HOME_DIR');
}
