import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { APPROVALS_TOKEN, approvalSubjects, sandboxPermissions, sandboxSubjects } from '../src/index';

/**
 * Whether two NATS subject patterns can match a common subject (`*` is one token, `>` one or
 * more trailing tokens). A permission that overlaps an approval subject would let a sandbox
 * answer or read approvals, so "no overlap" is the property that matters, not "not equal".
 */
function overlaps(a: string[], b: string[]): boolean {
  const [x, ...xs] = a;
  const [y, ...ys] = b;
  if (x === undefined || y === undefined) return x === undefined && y === undefined;
  if (x === '>' || y === '>') return true;
  if (x !== '*' && y !== '*' && x !== y) return false;
  return overlaps(xs, ys);
}
const overlap = (p: string, q: string) => overlaps(p.split('.'), q.split('.'));

const idChars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'.split('');
const anId = fc.oneof(
  fc.string({ unit: fc.constantFrom(...idChars), minLength: 1, maxLength: 64 }),
  // The tokens that sit next to ids in subjects, to hunt for accidental collisions.
  fc.constantFrom('approvals', 'requests', 'pending', 'answer', 'invoke', 'output', 'gh', 'run_a'),
);

describe('approval subjects', () => {
  it('names the requests, answer and pending subjects of one run', () => {
    const s = approvalSubjects('run_a');
    expect(s.requests).toBe('gh.run_a.approvals.requests');
    expect(s.answer('req_1')).toBe('gh.run_a.approvals.answer.req_1');
    expect(s.pending).toBe('gh.run_a.approvals.pending');
    expect(() => approvalSubjects('run.*')).toThrow();
    expect(() => s.answer('req.>')).toThrow();
    expect(() => s.answer('*')).toThrow();
  });

  it('reserves the approvals token: no sandbox can be named so', () => {
    expect(() => sandboxSubjects('run_a', APPROVALS_TOKEN)).toThrow(/reserved/);
    expect(() => sandboxPermissions('run_a', APPROVALS_TOKEN)).toThrow(/reserved/);
  });

  it('no sandbox permission of any run ever covers an approval subject of any run', () => {
    fc.assert(
      fc.property(anId, anId, anId, anId, fc.boolean(), (sandboxRun, sandboxId, otherRun, requestId, sameRun) => {
        let perms: { publish: string[]; subscribe: string[] };
        try {
          perms = sandboxPermissions(sandboxRun, sandboxId);
        } catch {
          return sandboxId === APPROVALS_TOKEN; // the only id refused is the reserved one
        }
        const run = sameRun ? sandboxRun : otherRun;
        const a = approvalSubjects(run);
        // Concrete subjects, and the wildcard over the whole approvals space of this and every run.
        const targets = [
          a.requests,
          a.pending,
          a.answer(requestId),
          `gh.${run}.${APPROVALS_TOKEN}.>`,
          `gh.*.${APPROVALS_TOKEN}.>`,
        ];
        for (const permission of [...perms.publish, ...perms.subscribe]) {
          for (const target of targets) {
            if (overlap(permission, target)) throw new Error(`${permission} overlaps ${target}`);
          }
        }
        return true;
      }),
      { numRuns: 2000 },
    );
  });

  it('the overlap check itself sees an overlap when there is one', () => {
    expect(overlap('gh.r.approvals.>', 'gh.*.approvals.answer.x')).toBe(true);
    expect(overlap('gh.r.s.output.*', 'gh.r.s.output.inv_1')).toBe(true);
    expect(overlap('gh.r.s.output.*', 'gh.r.approvals.answer.x')).toBe(false);
    expect(overlap('gh.r.s.ready', 'gh.r.s.ready.more')).toBe(false);
  });
});
