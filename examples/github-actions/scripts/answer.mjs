// Step 2 (mode answer, on workflow_dispatch): a maintainer's answer to a paused run, then the run resumes.
// The workflow has downloaded the paused run's artifact (inputs.origin) into GATEHOUSE_ARTIFACT_DIR and checked
// out the commit meta.json names. Inputs arrive as variables, never spliced into a command line:
//   INPUT_RUN, INPUT_REQUEST  ids from the paused run's summary      INPUT_DECISION  approve | deny
//   INPUT_REASON              recorded (a denial's reason is shown to the model)
// GitHub lets only users with write access dispatch a workflow; the answer records who (GITHUB_ACTOR).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { finish } from './finish.mjs';
import { artifactPaths, fail, gatehouse, REQUEST_ID, required, RUN_ID } from './lib.mjs';

const runId = required('INPUT_RUN').trim();
const requestId = required('INPUT_REQUEST').trim();
const decision = required('INPUT_DECISION').trim();
const actor = required('GITHUB_ACTOR');
const reason = (process.env.INPUT_REASON ?? '').trim();
if (!RUN_ID.test(runId)) fail(`run ${JSON.stringify(runId)} is not a gatehouse run id (run_…)`);
if (!REQUEST_ID.test(requestId)) fail(`request ${JSON.stringify(requestId)} is not an approval request id (apr_…)`);
if (decision !== 'approve' && decision !== 'deny')
  fail(`decision must be approve or deny, not ${JSON.stringify(decision)}`);
if (decision === 'deny' && reason === '') fail('a denial needs a reason: the model is told it');

const { stateDir, meta: metaFile } = artifactPaths();
if (!existsSync(metaFile)) fail(`no paused run was downloaded (${metaFile} is missing): check the origin run id`);
const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
if (meta.runId !== runId) fail(`the downloaded artifact holds run ${meta.runId}, not ${runId}`);
const repoDir = path.resolve(required('GATEHOUSE_REPO'));

const who = `github:${actor} (workflow_dispatch, GitHub run ${process.env.GITHUB_RUN_ID ?? '?'})`;
const answer = gatehouse(
  [
    decision === 'approve' ? 'approve' : 'deny',
    runId,
    requestId,
    '--state-dir',
    stateDir,
    '--on-behalf-of',
    who,
    ...(reason !== '' ? ['--reason', reason] : []),
  ],
  { cwd: repoDir },
);
if (answer.status !== 0) fail(`gatehouse could not record the answer (exit ${answer.status}); the job log says why`);

const resumed = gatehouse(['resume', runId, '--repo', repoDir, '--state-dir', stateDir, '--on-ask', 'pause'], {
  cwd: repoDir,
});
process.exitCode = finish({ exitCode: resumed.status, runId, repoDir, meta });
