import type { EventEnvelope } from '@gatehouse/shared';
import { oneLine } from '../approval/channels/screen';

/**
 * The lines a person sees for the environment's events: setup and its cache, preflight, the egress
 * proxy's refusals, and what the copy-in left out. Undefined for any other event.
 */
export function environmentLines(e: EventEnvelope): string[] | undefined {
  switch (e.type) {
    case 'setup.started': {
      const d = e.data;
      const hosts = d.egress.length ? d.egress.join(', ') : 'nothing';
      return [`  setup in ${d.image}: ${d.commands.length} command(s); setup may reach ${hosts}`];
    }
    case 'setup.command': {
      const d = e.data;
      const ok = d.status === 'ok' && d.exitCode === 0;
      const how = d.exitCode === null ? d.status : `exit ${d.exitCode}`;
      return [`  ${ok ? '✓' : '✗'} setup: ${oneLine(d.command).slice(0, 120)}  (${how}, ${fmtMs(d.durationMs)})`];
    }
    case 'setup.completed': {
      const d = e.data;
      return [
        d.cacheHit
          ? `  setup: cache hit (${d.image}), skipped`
          : `  setup done in ${fmtMs(d.durationMs)}; kept as ${d.image}` +
            (d.cachedPaths === undefined ? '' : ` (${d.cachedPaths} new path(s))`),
      ];
    }
    case 'setup.failed': {
      const d = e.data;
      const [first, ...rest] = d.reason.split('\n');
      return [`  ✗ ${d.stage === 'preflight' ? 'preflight' : 'setup'}: ${oneLine(first ?? '')}`].concat(
        rest.slice(-5).map((l) => `      │ ${oneLine(l).slice(0, 160)}`),
      );
    }
    case 'egress.denied': {
      const d = e.data;
      return [`  ✗ egress (${d.phase}) ${oneLine(d.host)}:${d.port} denied: ${oneLine(d.reason)}`];
    }
    case 'sandbox.started':
      return (e.data.notices ?? []).map((n) => `  note: ${oneLine(n)}`);
    default:
      return undefined;
  }
}

function fmtMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
