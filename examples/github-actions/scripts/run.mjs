// Step 2 (mode run): one headless gatehouse run on the checked-out repository with the trusted config.
//   GATEHOUSE_TASK_TEXT  the task (from authorize.mjs)        GATEHOUSE_MODEL  e.g. openai:gpt-4.1
//   GATEHOUSE_REPO       the checkout to work on              GATEHOUSE_CONFIG the trusted config (base branch's)
//   GATEHOUSE_SHA        the commit it was checked out at      GATEHOUSE_ARTIFACT_DIR (default $RUNNER_TEMP/gatehouse)
// Exits with gatehouse's own exit code: 0 final, 3 paused, 4 partial, 1 failed, 5 setup failed (docs/cli.md).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { finish, newestRun } from './finish.mjs';
import { artifactPaths, fail, gatehouse, required } from './lib.mjs';

const task = required('GATEHOUSE_TASK_TEXT');
const repoDir = path.resolve(required('GATEHOUSE_REPO'));
const model = required('GATEHOUSE_MODEL');
const config = process.env.GATEHOUSE_CONFIG ? path.resolve(process.env.GATEHOUSE_CONFIG) : undefined;
if (config && !existsSync(config)) fail(`GATEHOUSE_CONFIG names ${config}, which does not exist`);
const { stateDir } = artifactPaths();
mkdirSync(stateDir, { recursive: true });

const args = ['run', task, '--repo', repoDir, '--model', model, '--state-dir', stateDir, '--on-ask', 'pause'];
if (config) args.push('--config', config);
const { status } = gatehouse(args, { cwd: repoDir });
process.exitCode = finish({
  exitCode: status,
  runId: newestRun(stateDir, repoDir),
  repoDir,
  meta: { sha: process.env.GATEHOUSE_SHA ?? null, task, model, repository: process.env.GITHUB_REPOSITORY ?? null },
});
