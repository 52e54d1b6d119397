import type Docker from 'dockerode';
import { LABEL } from './labels';

interface DockerEvent {
  Type?: string;
  Action?: string;
  id?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

/**
 * Follows Docker's event stream for sandbox containers and reports deaths as they happen, which
 * is faster than waiting for missed heartbeats. Returns a function that stops watching.
 */
export async function watchContainerDeaths(
  d: Docker,
  onDeath: (containerId: string, why: string) => void,
): Promise<() => void> {
  const stream = (await d.getEvents({
    filters: { type: ['container'], event: ['die', 'oom'], label: [`${LABEL.role}=sandbox`] },
  })) as NodeJS.ReadableStream & { destroy?: () => void };
  let buffer = '';
  const oomKilled = new Set<string>();
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      let ev: DockerEvent;
      try {
        ev = JSON.parse(line) as DockerEvent;
      } catch {
        continue;
      }
      const id = ev.Actor?.ID ?? ev.id;
      if (!id) continue;
      if (ev.Action === 'oom') {
        oomKilled.add(id);
        continue;
      }
      const code = ev.Actor?.Attributes?.exitCode;
      onDeath(id, `container died (exit code ${code ?? 'unknown'}${oomKilled.has(id) ? ', out of memory' : ''})`);
    }
  });
  stream.on('error', () => undefined);
  return () => stream.destroy?.();
}
