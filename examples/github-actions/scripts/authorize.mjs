// Step 1 of the workflow: decides whether this event may start a run, and on what.
//   pull_request         a branch of this repository (a fork's pull request gets no run: a maintainer asks for one
//                        with a comment); the task is GATEHOUSE_TASK.
//   issue_comment        `/gatehouse TASK` from a user with write access (asked of the API, never taken from the
//                        event's author_association); on a pull request the run works on its head commit, pinned now.
//   workflow_dispatch    an approval or denial of a paused run: GitHub lets only users with write access dispatch.
// Outputs: run (true|false), mode (run|answer), sha, task, number. A refusal is a skipped run, not a failed job.
import { fail, readEvent, REQUEST_ID, required, RUN_ID, setOutput } from './lib.mjs';

const WRITE = new Set(['admin', 'maintain', 'write']);
const COMMAND = /^\/gatehouse(?:[ \t]+([\s\S]*))?$/;
const MAX_TASK = 8000;

/** GET on the GitHub API with the job's token; any failure refuses (fail closed). */
async function api(pathname) {
  const base = (process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
  const res = await fetch(`${base}${pathname}`, {
    headers: {
      authorization: `Bearer ${required('GITHUB_TOKEN')}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    },
    signal: AbortSignal.timeout(15_000),
  }).catch((e) => fail(`the GitHub API did not answer ${pathname}: ${e.message}`));
  if (!res.ok) fail(`the GitHub API answered ${res.status} to ${pathname}; no run without an answer`);
  return res.json();
}

function skip(reason) {
  process.stdout.write(`gatehouse: no run: ${reason}\n`);
  setOutput('run', 'false');
  setOutput('reason', reason);
}

function start({ mode, sha, task, number }) {
  if (mode === 'run' && !/^[0-9a-f]{40}$/.test(sha ?? '')) fail(`no commit to run on (got ${JSON.stringify(sha)})`);
  setOutput('run', 'true');
  setOutput('mode', mode);
  setOutput('sha', sha ?? '');
  setOutput('task', task ?? '');
  setOutput('number', number ?? '');
}

const name = required('GITHUB_EVENT_NAME');
const event = readEvent();
const repo = required('GITHUB_REPOSITORY');
const enc = encodeURIComponent;

if (name === 'pull_request') {
  const pr = event.pull_request;
  if (pr?.head?.repo?.full_name !== repo) {
    skip(
      `pull request #${pr?.number} comes from a fork; a maintainer can start a run with a "/gatehouse TASK" comment`,
    );
  } else if (!process.env.GATEHOUSE_TASK) {
    fail('set GATEHOUSE_TASK (a repository variable): what gatehouse should do on a pull request');
  } else start({ mode: 'run', sha: pr.head.sha, task: process.env.GATEHOUSE_TASK, number: pr.number });
} else if (name === 'issue_comment') {
  const body = String(event.comment?.body ?? '').trim();
  const login = event.comment?.user?.login;
  const command = COMMAND.exec(body);
  if (event.action !== 'created') skip(`the comment was ${event.action}, not created`);
  else if (!command) skip('the comment does not start with /gatehouse');
  else if (!command[1]?.trim()) skip('"/gatehouse" needs a task after it');
  else if (command[1].length > MAX_TASK) skip(`the task is longer than ${MAX_TASK} characters`);
  else if (typeof login !== 'string' || event.comment?.user?.type === 'Bot') skip('comments from bots start no run');
  else {
    const permission = (await api(`/repos/${repo}/collaborators/${enc(login)}/permission`)).permission;
    if (!WRITE.has(permission)) skip(`@${login} has ${permission ?? 'no'} access; a run needs write access`);
    else if (event.issue?.pull_request) {
      // The head as it is now, not whatever is pushed between this check and the checkout.
      const pr = await api(`/repos/${repo}/pulls/${enc(event.issue.number)}`);
      start({ mode: 'run', sha: pr.head?.sha, task: command[1].trim(), number: event.issue.number });
    } else {
      const branch = event.repository?.default_branch;
      const ref = await api(`/repos/${repo}/commits/${enc(branch)}`);
      start({ mode: 'run', sha: ref.sha, task: command[1].trim(), number: event.issue?.number });
    }
  }
} else if (name === 'workflow_dispatch') {
  // Checked before the answer job uses them to pick an artifact; answer.mjs checks them again before use.
  const inputs = event.inputs ?? {};
  if (!/^[0-9]{1,20}$/.test(String(inputs.origin ?? '').trim())) fail('origin must be a GitHub run id (digits)');
  if (!RUN_ID.test(String(inputs.run ?? '').trim())) fail('run must be a gatehouse run id (run_…)');
  if (!REQUEST_ID.test(String(inputs.request ?? '').trim())) fail('request must be an approval request id (apr_…)');
  start({ mode: 'answer' });
  setOutput('origin', String(inputs.origin).trim());
} else {
  skip(`the workflow does not handle ${name} events`);
}
