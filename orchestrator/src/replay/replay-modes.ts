import type { ReplayMode } from '@gatehouse/shared';
import type { ReplayModeRunner } from './replay-types';

/**
 * The replay modes, loaded on demand (a mode pulls in what it needs: a provider, a sandbox driver).
 * Each mode's file exports one ReplayModeRunner.
 */
export const REPLAY_MODES: Partial<Record<ReplayMode, () => Promise<ReplayModeRunner>>> = {
  trace: async () => (await import('./trace-mode')).traceMode,
  'dry-run': async () => (await import('./dry-run-mode')).dryRunMode,
  model: async () => (await import('./model-mode')).modelMode,
  execution: async () => (await import('./execution-mode')).executionMode,
};
