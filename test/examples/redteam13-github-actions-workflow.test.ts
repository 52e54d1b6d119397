import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { EXAMPLE } from '../support/github-actions';

/**
 * Red team (issue 13): the example workflow against GitHub's known pitfalls, read as GitHub reads it.
 */
type Job = { concurrency?: { group: string; 'cancel-in-progress': boolean }; steps: Array<Record<string, unknown>> };
const text = readFileSync(path.join(EXAMPLE, 'gatehouse.yml'), 'utf8');
const workflow = load(text) as { on: Record<string, unknown>; concurrency?: unknown; jobs: Record<string, Job> };

describe('red team: the example workflow and GitHub pitfalls', () => {
  it('never uses pull_request_target or workflow_run (they run with secrets on a fork’s behalf)', () => {
    expect(Object.keys(workflow.on)).not.toContain('pull_request_target');
    expect(Object.keys(workflow.on)).not.toContain('workflow_run');
  });

  it('no ${{ }} expression inside a run: line (event text would become shell)', () => {
    for (const job of Object.values(workflow.jobs))
      for (const s of job.steps) if (typeof s.run === 'string') expect(s.run).not.toContain('${{');
  });

  it('concurrency is per job, so a comment that starts no run cannot cancel a pending one', () => {
    // Every comment starts a workflow run; with a workflow-level group, a stranger's comments would
    // each replace the pending run of the group: a maintainer's "/gatehouse" queued behind a run.
    expect(workflow.concurrency).toBeUndefined();
    expect(workflow.jobs.authorize?.concurrency).toBeUndefined();
    expect(workflow.jobs.run?.concurrency).toEqual({
      group: 'gatehouse-run-${{ github.event.pull_request.number || github.event.issue.number || github.run_id }}',
      'cancel-in-progress': false,
    });
    // Two answers to the same paused run (its origin, checked by authorize) are never resumed side by side.
    expect(workflow.jobs.answer?.concurrency).toEqual({
      group: 'gatehouse-answer-${{ needs.authorize.outputs.origin }}',
      'cancel-in-progress': false,
    });
  });

  it('the authorize job may read the Actions API (it asks what a dispatch’s origin run was)', () => {
    expect((workflow.jobs.authorize as Job & { permissions: Record<string, string> }).permissions.actions).toBe('read');
  });
});
