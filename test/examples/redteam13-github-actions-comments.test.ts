import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiStub, outputs, runner, step, type ApiStub } from '../support/github-actions';

/**
 * Red team (issue 13): hostile comments and a fork that pushes after a maintainer's "/gatehouse".
 * The GitHub API is a loopback stand-in, some of whose answers are odd on purpose.
 */
const REVIEWED = '1a2b3c4d5e'.repeat(4);
const PUSHED_LATER = 'f00dfeed00'.repeat(4);
const FORK_PR = { head: { sha: PUSHED_LATER, repo: { full_name: 'mallory/app' } } };
const FORK_PR_UNMOVED = { head: { sha: REVIEWED, repo: { full_name: 'mallory/app' } } };

let api: ApiStub;
beforeAll(async () => {
  api = await apiStub({
    '/repos/example/app/collaborators/writer/permission': { body: { permission: 'write' } },
    '/repos/example/app/collaborators/shouty/permission': { body: { permission: 'WRITE' } },
    '/repos/example/app/collaborators/listy/permission': { body: { permission: ['write'] } },
    '/repos/example/app/collaborators/nully/permission': { body: null },
    '/repos/example/app/pulls/7': { body: FORK_PR },
    '/repos/example/app/pulls/8': { body: FORK_PR_UNMOVED },
    '/repos/example/app/pulls/9': { body: { head: { sha: 'not-a-sha', repo: { full_name: 'example/app' } } } },
    '/repos/example/app/pulls/10': { body: { head: { sha: REVIEWED, repo: null } } },
  });
});
afterAll(() => api.close());

function comment(body: string, number = 7, login = 'writer') {
  return {
    action: 'created',
    comment: { body, user: { login, type: 'User' } },
    issue: { number, pull_request: { url: 'x' } },
    repository: { full_name: 'example/app', default_branch: 'main' },
  };
}

async function authorize(event: unknown) {
  const r = runner({ GITHUB_EVENT_NAME: 'issue_comment', GITHUB_API_URL: api.url });
  const res = await step(r, 'authorize.mjs', event);
  return { ...res, out: outputs(r) };
}

describe("red team: a fork's pull request and a maintainer's comment", () => {
  it('a head pushed after the comment is not run: on a fork the comment must name the commit', async () => {
    const r = await authorize(comment('/gatehouse run the tests'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.run).toEqual(['false']);
    expect(r.out.reason?.[0]).toMatch(/fork: name the commit you reviewed/);
  });

  it('a comment naming the reviewed commit, after which the fork pushed, is not run', async () => {
    const r = await authorize(comment(`/gatehouse@${REVIEWED} run the tests`));
    expect(r.out.run).toEqual(['false']);
    expect(r.out.reason?.[0]).toContain(`head is ${PUSHED_LATER} now`);
    expect(r.out.sha).toBeUndefined();
  });

  it('a comment naming the commit that is still the head runs on it', async () => {
    const r = await authorize(comment(`/gatehouse@${REVIEWED} run the tests`, 8));
    expect(r.status, r.stderr).toBe(0);
    expect([r.out.run, r.out.sha, r.out.task]).toEqual([['true'], [REVIEWED], ['run the tests']]);
  });

  it('a pull request whose head repository is gone counts as a fork', async () => {
    const r = await authorize(comment('/gatehouse run the tests', 10));
    expect(r.out.run).toEqual(['false']);
  });

  it('a head that is not a commit id fails closed', async () => {
    const r = await authorize(comment('/gatehouse run the tests', 9));
    expect(r.status).toBe(1);
    expect(r.out.run).toBeUndefined();
  });
});

describe('red team: crafted comments and odd API answers', () => {
  it.each([
    ['a zero-width space inside the command', '/gate\u200bhouse run'],
    ['a fullwidth solidus', '\uff0fgatehouse run'],
    ['a homoglyph (Cyrillic a)', '/g\u0430tehouse run'],
    ['a no-break space after the command', '/gatehouse\u00a0run'],
    ['a command glued to more letters', '/gatehouses run'],
    ['an upper-case command (the YAML filter is case-blind)', '/GATEHOUSE run'],
    ['a task longer than 8000 characters', `/gatehouse ${'x'.repeat(8001)}`],
    ['a pin that is not hex', '/gatehouse@zzzzzzz run'],
    // 28 bits: a fork can make a commit with any chosen 7-digit prefix in minutes.
    ['a short pin', `/gatehouse@${REVIEWED.slice(0, 7)} run`],
    ['a 39-digit pin', `/gatehouse@${REVIEWED.slice(0, 39)} run`],
    ['a pin in capitals', `/gatehouse@${REVIEWED.toUpperCase()} run`],
  ])('no run for %s', async (_what, body) => {
    const r = await authorize(comment(body, 8));
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.run).toEqual(['false']);
  });

  it.each([
    ['a permission in capitals', 'shouty'],
    ['a permission in a list', 'listy'],
  ])('no run for %s', async (_what, login) => {
    const r = await authorize(comment(`/gatehouse@${REVIEWED} run`, 8, login));
    expect(r.out.run).toEqual(['false']);
  });

  it('an answer without a permission starts no run', async () => {
    // The stand-in sends its 404 body for a null route: a 200 with no permission field.
    const r = await authorize(comment(`/gatehouse@${REVIEWED} run`, 8, 'nully'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.run).toEqual(['false']);
  });

  it('a 60,000-character comment cannot forge outputs or overflow into them', async () => {
    const body = `/gatehouse@${REVIEWED} ${'run=true\nsha=evil\n'.repeat(400)}`;
    const r = await authorize(comment(body, 8));
    expect(r.status, r.stderr).toBe(0);
    expect(Object.keys(r.out).sort()).toEqual(['mode', 'number', 'run', 'sha', 'task']);
    expect(r.out.sha).toEqual([REVIEWED]);
  });
});
