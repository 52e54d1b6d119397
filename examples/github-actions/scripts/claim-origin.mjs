// First step of the answer job, after its concurrency group (one origin at a time): a paused run is answered once.
// Each answer job leaves a marker artifact `gatehouse-answered-<origin>`; a second dispatch naming the same origin
// would resume the same paused state again (a second continuation, billed twice), so it is refused here. A run that
// pauses again is answered through its new origin: the answer job's own run id, on its summary.
import { api, fail, required } from './lib.mjs';

const origin = required('GATEHOUSE_ORIGIN');
if (!/^[0-9]{1,20}$/.test(origin)) fail('GATEHOUSE_ORIGIN must be a GitHub run id (digits)');
const repo = required('GITHUB_REPOSITORY');
const name = `gatehouse-answered-${origin}`;
const found = await api(`/repos/${repo}/actions/artifacts?name=${encodeURIComponent(name)}&per_page=1`);
const count = Number(found?.total_count);
if (!Number.isInteger(count)) fail(`the GitHub API gave no artifact count for ${name}; no answer without one`);
if (count > 0) {
  const by = found.artifacts?.[0]?.workflow_run?.id;
  fail(`run ${origin} was already answered${by ? ` (GitHub run ${by})` : ''}: answer the run it left instead`);
}
process.stdout.write(`gatehouse: run ${origin} has not been answered yet\n`);
