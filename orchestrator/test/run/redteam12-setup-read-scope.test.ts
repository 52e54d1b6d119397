import { describe, expect, it } from 'vitest';
import { pathDenial } from '../../src/policy/path-denial';
import { setupReadScope } from '../../src/run/environment';
import type { RunEnvironment } from '../../src/run/types';

type ScopeInputs = Parameters<typeof setupReadScope>[0];
const config = (include: string[] = []) =>
  ({ copy: { exclude: [], include } }) as unknown as NonNullable<RunEnvironment['projectConfig']>;
const policy = (paths = false) =>
  ({
    mode: 'default',
    decide: () => ({}),
    ...(paths ? { paths: pathDenial([]) } : {}),
  }) as unknown as ScopeInputs['policy'];

/**
 * Red team (issue 12): the setup cache key must change with what the setup sandbox could read. A
 * result built while `.env` was readable (a build step that inlines it into dist/) must not be the
 * starting point of a run whose policy withholds `.env`, nor of one that does not copy it in.
 */
describe('the setup cache key follows what setup could read', () => {
  const none = setupReadScope({ projectConfig: config(), policy: policy() });
  it('a policy (by its hash) changes it', () => {
    const a = setupReadScope({
      projectConfig: config(),
      policy: policy(true),
      policyRecord: { source: 'p.json', sha256: 'a'.repeat(64), file: {} },
    });
    const b = setupReadScope({
      projectConfig: config(),
      policy: policy(true),
      policyRecord: { source: 'p.json', sha256: 'b'.repeat(64), file: {} },
    });
    expect(a).not.toBe(none);
    expect(a).not.toBe(b);
  });
  it('path rules without a record still differ from none', () => {
    expect(setupReadScope({ projectConfig: config(), policy: policy(true) })).not.toBe(none);
  });
  it('copy globs change it', () => {
    expect(setupReadScope({ projectConfig: config(['.env']), policy: policy() })).not.toBe(none);
  });
});
