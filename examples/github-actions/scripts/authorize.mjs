// Step 1 of the workflow: decides whether this event may start a run, and on what.
//   pull_request         a branch of this repository (a fork's pull request gets no run: a maintainer asks for one
//                        with a comment); the task is GATEHOUSE_TASK.
//   issue_comment        `/gatehouse TASK` from a user with write access (asked of the API, never taken from the
//                        event's author_association); on a pull request the run works on its head commit, pinned now;
//                        on a fork's, only as `/gatehouse@SHA TASK` with SHA the head (what the commenter reviewed).
//   workflow_dispatch    an approval or denial of a paused run: GitHub lets only users with write access dispatch;
//                        the origin run must be this workflow's, on this repository's code (asked of the API).
// Outputs: run (true|false), mode (run|answer), sha, task, number. A refusal is a skipped run, not a failed job.
import { api, fail, readEvent, REQUEST_ID, required, RUN_ID, setOutput } from './lib.mjs';

const WRITE = new Set(['admin', 'maintain', 'write']);
// `/gatehouse TASK`, or `/gatehouse@SHA TASK` naming the commit the commenter read (its whole id; required on a
// fork's pull request).
// The whole id: a short prefix is cheap to match with another commit (7 hex digits are 28 bits).
const COMMAND = /^\/gatehouse(?:@([0-9a-f]{40}))?(?:[ \t]+([\s\S]*))?$/;
const MAX_TASK = 8000;
/** The events whose runs of this workflow upload a gatehouse run (a resumed one too). */
const ORIGIN_EVENTS = new Set(['pull_request', 'issue_comment', 'workflow_dispatch']);

/**
 * The answer job resumes whatever the origin's artifact holds (its policy, config, model and commit) with
 * this repository's secrets, so the origin must be a run of this same workflow on this repository's own
 * code. A fork's pull request runs the workflow file the fork wrote, and can upload an artifact with the
 * name the answer job downloads: that run's head repository is the fork.
 */
async function trustedOrigin(origin) {
  const here = await api(`/repos/${repo}/actions/runs/${enc(required('GITHUB_RUN_ID'))}`);
  const there = await api(`/repos/${repo}/actions/runs/${enc(origin)}`);
  if (!Number.isSafeInteger(here?.workflow_id) || there?.workflow_id !== here.workflow_id)
    fail(`GitHub run ${origin} is not a run of this workflow; answer the run named on a gatehouse run's summary`);
  if (there.head_repository?.full_name !== repo)
    fail(
      `GitHub run ${origin} ran code from ${there.head_repository?.full_name ?? 'an unknown repository'}, not ` +
        `${repo}: a fork's run is never resumed with this repository's secrets`,
    );
  if (!ORIGIN_EVENTS.has(there.event))
    fail(`GitHub run ${origin} was started by ${there.event}, which starts no gatehouse run`);
}

/** No commit named, or the one named is `sha`. */
function pinned(pin, sha) {
  return pin === undefined || pin === sha;
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
  else if (!command[2]?.trim()) skip('"/gatehouse" needs a task after it');
  else if (command[2].length > MAX_TASK) skip(`the task is longer than ${MAX_TASK} characters`);
  else if (typeof login !== 'string' || event.comment?.user?.type === 'Bot') skip('comments from bots start no run');
  else {
    const permission = (await api(`/repos/${repo}/collaborators/${enc(login)}/permission`)).permission;
    if (!WRITE.has(permission)) skip(`@${login} has ${permission ?? 'no'} access; a run needs write access`);
    else if (event.issue?.pull_request) {
      // The head as it is now, not whatever is pushed between this check and the checkout.
      const pr = await api(`/repos/${repo}/pulls/${enc(event.issue.number)}`);
      // A fork's author can push between the comment and this job; the head read here would then be
      // code the commenter never saw, run with the repository's secrets. So on a fork the comment names
      // the commit it approves, and a head that moved since starts nothing.
      const fork = pr.head?.repo?.full_name !== repo;
      if (fork && !command[1])
        skip(
          `pull request #${event.issue.number} comes from a fork: name the commit you reviewed, ` +
            `"/gatehouse@${pr.head?.sha ?? 'SHA'} TASK" (the whole commit id)`,
        );
      else if (!pinned(command[1], pr.head?.sha))
        skip(`the pull request's head is ${pr.head?.sha} now, not the ${command[1]} the comment names`);
      else start({ mode: 'run', sha: pr.head?.sha, task: command[2].trim(), number: event.issue.number });
    } else {
      const branch = event.repository?.default_branch;
      const ref = await api(`/repos/${repo}/commits/${enc(branch)}`);
      if (!pinned(command[1], ref.sha)) skip(`${branch} is at ${ref.sha} now, not the ${command[1]} the comment names`);
      else start({ mode: 'run', sha: ref.sha, task: command[2].trim(), number: event.issue?.number });
    }
  }
} else if (name === 'workflow_dispatch') {
  // Checked before the answer job uses them to pick an artifact; answer.mjs checks them again before use.
  const inputs = event.inputs ?? {};
  if (!/^[0-9]{1,20}$/.test(String(inputs.origin ?? '').trim())) fail('origin must be a GitHub run id (digits)');
  if (!RUN_ID.test(String(inputs.run ?? '').trim())) fail('run must be a gatehouse run id (run_…)');
  if (!REQUEST_ID.test(String(inputs.request ?? '').trim())) fail('request must be an approval request id (apr_…)');
  const origin = String(inputs.origin).trim();
  await trustedOrigin(origin);
  start({ mode: 'answer' });
  setOutput('origin', origin);
} else {
  skip(`the workflow does not handle ${name} events`);
}
