import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiStub, outputs, runner, step, type ApiStub } from '../support/github-actions';

/**
 * Red team (issue 13): artifact poisoning. A fork's pull request runs the workflow file the fork
 * wrote (without secrets), and that file can upload an artifact named `gatehouse-<its run id>` with
 * any meta.json and state directory: a policy that allows everything, a config, a model, a commit.
 * A maintainer asked to "approve" with origin=<that run> must not get it resumed with the
 * repository's secrets. authorize.mjs asks the API (a loopback stand-in) what the origin run was.
 */
const OURS = { workflow_id: 55, event: 'workflow_dispatch', head_repository: { full_name: 'example/app' } };
const ORIGINS: Record<string, unknown> = {
  // A paused run of this workflow from a "/gatehouse" comment: the one legitimate case.
  '200': { workflow_id: 55, event: 'issue_comment', head_repository: { full_name: 'example/app' } },
  // The fork's own run of the same workflow path, on its pull request.
  '201': { workflow_id: 55, event: 'pull_request', head_repository: { full_name: 'mallory/app' } },
  // Another workflow of the repository that happens to upload gatehouse-N.
  '202': { workflow_id: 99, event: 'push', head_repository: { full_name: 'example/app' } },
  // A head repository missing from the answer (a deleted fork).
  '203': { workflow_id: 55, event: 'pull_request', head_repository: null },
  // This workflow, but on a schedule someone added in a branch.
  '204': { workflow_id: 55, event: 'schedule', head_repository: { full_name: 'example/app' } },
  // Odd JSON: nothing to compare, which must not compare equal.
  '205': {},
};

let api: ApiStub;
let odd: ApiStub;
beforeAll(async () => {
  const routes: Record<string, { body: unknown }> = { '/repos/example/app/actions/runs/1001': { body: OURS } };
  for (const [id, body] of Object.entries(ORIGINS)) routes[`/repos/example/app/actions/runs/${id}`] = { body };
  api = await apiStub(routes);
  odd = await apiStub({
    '/repos/example/app/actions/runs/1001': { body: [] },
    '/repos/example/app/actions/runs/205': { body: {} },
  });
});
afterAll(async () => {
  await api.close();
  await odd.close();
});

async function dispatch(origin: string, url = api.url) {
  const r = runner({ GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_API_URL: url });
  const inputs = { origin, run: 'run_abc123', request: 'apr_def456', decision: 'approve' };
  const res = await step(r, 'authorize.mjs', { inputs });
  return { ...res, out: outputs(r) };
}

describe('red team: which run a workflow_dispatch answer may resume', () => {
  it("a paused run of this workflow on the repository's own code", async () => {
    const r = await dispatch('200');
    expect(r.status, r.stderr).toBe(0);
    expect([r.out.run, r.out.mode, r.out.origin]).toEqual([['true'], ['answer'], ['200']]);
  });

  it.each([
    ['a fork pull request’s run (its artifact is the fork’s)', '201', /mallory\/app.*fork/],
    ['a run of another workflow', '202', /not a run of this workflow/],
    ['a run whose head repository is unknown', '203', /unknown repository/],
    ['a run started by an event that starts no gatehouse run', '204', /schedule/],
    ['a run the API describes with nothing', '205', /not a run of this workflow/],
  ])('not %s', async (_what, origin, message) => {
    const r = await dispatch(origin);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.out.run).toBeUndefined();
  });

  it('not when the API answers odd JSON for the dispatching run itself', async () => {
    const r = await dispatch('205', odd.url);
    expect(r.status).toBe(1);
    expect(r.out.run).toBeUndefined();
  });

  it('not when the origin is unknown to the API (fails closed)', async () => {
    const r = await dispatch('999');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('answered 404');
    expect(r.out.run).toBeUndefined();
  });
});
