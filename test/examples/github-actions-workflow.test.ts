import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { EXAMPLE } from '../support/github-actions';

/**
 * The example workflow's shape (examples/github-actions/gatehouse.yml), read as GitHub reads it:
 * every `run:` is one of the repository's scripts from the trusted checkout, no event text is
 * spliced into a command line, checkouts keep no credentials, the token is read-only.
 */
type Step = { uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string>; if?: string };
type Job = { steps: Step[]; permissions?: Record<string, string>; if?: string; needs?: string };
const workflow = load(readFileSync(path.join(EXAMPLE, 'gatehouse.yml'), 'utf8')) as {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, Job>;
};
const steps = Object.entries(workflow.jobs).flatMap(([job, j]) => j.steps.map((s) => ({ job, ...s })));

describe('the example GitHub Actions workflow', () => {
  it('listens to pull requests, comments and dispatches', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['issue_comment', 'pull_request', 'workflow_dispatch']);
  });

  it('runs only scripts of the repository, from the trusted checkout, with nothing spliced in', () => {
    const runs = steps.filter((s) => s.run !== undefined);
    expect(runs.length).toBeGreaterThanOrEqual(6);
    expect(workflow.env.SCRIPTS).toBe('trusted/.github/gatehouse/scripts');
    for (const s of runs) {
      const m = /^node "\$SCRIPTS\/([a-z-]+\.mjs)"$/.exec(s.run!.trim());
      expect(m, `${s.job}: ${s.run}`).not.toBeNull();
      expect(existsSync(path.join(EXAMPLE, 'scripts', m![1]!)), m![1]).toBe(true);
    }
  });

  it('checks out without credentials, and the trusted checkout is the default branch', () => {
    const checkouts = steps.filter((s) => s.uses?.startsWith('actions/checkout@'));
    expect(checkouts.length).toBe(5);
    for (const c of checkouts) expect(c.with?.['persist-credentials'], c.job).toBe(false);
    for (const c of checkouts.filter((s) => s.with?.path === 'trusted'))
      expect(c.with?.ref).toBe('${{ github.event.repository.default_branch }}');
  });

  it('grants read permissions only', () => {
    const all = [workflow.permissions, ...Object.values(workflow.jobs).map((j) => j.permissions ?? {})];
    for (const p of all) for (const level of Object.values(p)) expect(level).toBe('read');
  });

  it('uploads the run directory whatever the outcome, and downloads only an id authorize checked', () => {
    const uploads = steps.filter(
      (s) => s.uses?.startsWith('actions/upload-artifact@') && !String(s.with?.name).startsWith('gatehouse-answered-'),
    );
    expect(uploads.map((u) => u.job).sort()).toEqual(['answer', 'run']);
    for (const u of uploads) {
      expect(u.if).toBe('always()');
      expect(u.with?.path).toBe('${{ runner.temp }}/gatehouse');
    }
    const download = steps.find((s) => s.uses?.startsWith('actions/download-artifact@'));
    expect(download?.with?.['run-id']).toBe('${{ needs.authorize.outputs.origin }}');
    // The origin is claimed before its artifact is downloaded, and marked answered once gatehouse started on it.
    const answer = steps.filter((s) => s.job === 'answer');
    const claim = answer.findIndex((s) => s.run?.includes('claim-origin.mjs'));
    expect(claim).toBeGreaterThan(-1);
    expect(claim).toBeLessThan(answer.findIndex((s) => s.uses?.startsWith('actions/download-artifact@')));
    const marker = answer.find((s) => String(s.with?.name).startsWith('gatehouse-answered-'));
    expect(marker?.with?.name).toBe('gatehouse-answered-${{ needs.authorize.outputs.origin }}');
    expect(marker?.if).toBe("always() && steps.gatehouse.outcome != 'skipped'");
  });

  it('gives secrets only to the steps that run gatehouse', () => {
    for (const s of steps) {
      const secret = Object.values(s.env ?? {}).some((v) => v.includes('secrets.'));
      expect(secret, `${s.job}: ${s.run ?? s.uses}`).toBe(/(run|answer)\.mjs"$/.test(s.run ?? ''));
    }
  });
});
