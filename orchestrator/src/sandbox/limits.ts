import { SandboxError } from './errors';
import type { SandboxLimits } from './container';

/** The project config's `limits` (docs/sandbox.md): megabytes and counts as people write them. */
export interface LimitsConfig {
  memoryMb?: number;
  cpus?: number;
  pids?: number;
  diskMb?: number;
}

const MB = 1024 * 1024;

/**
 * Sandbox limits from the config's `limits`; what is not given keeps the driver's default. A value
 * that is not a positive finite number (pids: a positive integer) is refused with its name.
 */
export function limitsFromConfig(config: LimitsConfig): Partial<SandboxLimits> {
  const out: Partial<SandboxLimits> = {};
  const positive = (name: keyof LimitsConfig, value: number | undefined, integer = false): value is number => {
    if (value === undefined) return false;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
      throw new SandboxError(
        `limits.${name} must be a positive ${integer ? 'integer' : 'number'}, not ${String(value)}`,
      );
    return true;
  };
  if (positive('memoryMb', config.memoryMb)) out.memoryBytes = Math.round(config.memoryMb * MB);
  if (positive('cpus', config.cpus)) out.cpus = config.cpus;
  if (positive('pids', config.pids, true)) out.pids = config.pids;
  if (positive('diskMb', config.diskMb)) out.diskBytes = Math.round(config.diskMb * MB);
  return out;
}
