import type { Evidence, ObservationFacts } from '../../src/loop/evidence';

type Outcome = ObservationFacts['outcome'];

/** One hand-built observation: tool, outcome, and for bash the command and exit code. */
export function fact(
  n: number,
  tool: string,
  outcome: Outcome,
  more: { command?: string; exitCode?: number | null; changed?: string[] } = {},
): ObservationFacts {
  return { id: `obs-${n}`, callId: `c${n}`, tool, outcome, changed: more.changed ?? [], ...more };
}

/** Evidence from hand-built observations: the run's changed files are every call's. */
export function evidenceOf(facts: ObservationFacts[], checkCommand?: string): Evidence {
  return {
    observations: new Map(facts.map((f) => [f.id, f])),
    changed: new Set(facts.flatMap((f) => f.changed)),
    ...(checkCommand ? { checkCommand } : {}),
  };
}

/** A run's observations, numbered as the table's answers cite them. */
export const RUN = evidenceOf(
  [
    fact(1, 'read_file', 'ok'),
    fact(2, 'bash', 'failed', { command: 'npm test', exitCode: 1 }),
    fact(3, 'edit_file', 'denied'),
    fact(4, 'bash', 'failed', { command: 'npm test', exitCode: 1 }),
    fact(5, 'edit_file', 'ok', { changed: ['src/math.js'] }),
    fact(6, 'bash', 'ok', { command: 'npm test', exitCode: 0 }),
    fact(7, 'bash', 'ok', { command: 'ls -la', exitCode: 0 }),
    fact(8, 'write_file', 'ok', { changed: ['src/util.js'] }),
    fact(9, 'bash', 'ok', { command: 'npm run build', exitCode: 0 }),
    fact(10, 'bash', 'ok', { command: 'npm test 2>&1 | tail -5', exitCode: 0 }),
    fact(11, 'bash', 'ok', { command: 'npm test || true', exitCode: 0 }),
    fact(12, 'read_file', 'rejected'),
    fact(13, 'bash', 'ok', { command: 'node index.js', exitCode: 0 }),
    fact(14, 'bash', 'ok', { command: "sed -i 's/a/b/' src/b.js", exitCode: 0, changed: ['src/b.js'] }),
    fact(15, 'bash', 'ok', { command: 'make check', exitCode: 0 }),
    fact(16, 'bash', 'failed', { command: 'pytest -q', exitCode: 2 }),
    fact(17, 'bash', 'ok', { command: './scripts/verify.sh', exitCode: 0 }),
    fact(18, 'delegate', 'ok', { changed: ['lib/a.js'] }),
    fact(19, 'bash', 'failed', { command: 'npm test', exitCode: null }),
  ],
  './scripts/verify.sh',
);
