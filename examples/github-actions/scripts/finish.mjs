// What every run or resume step ends with: the report on the run's page, the facts the next job needs, the exit code.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { appendSummary, artifactPaths, gatehouse, setOutput } from './lib.mjs';

const STATUS = {
  0: 'final',
  1: 'failed',
  2: 'usage error',
  3: 'paused',
  4: 'partial',
  5: 'setup failed',
  130: 'cancelled',
};

/** The newest run in this job's state directory (each job has its own, so it is the one just run). */
export function newestRun(stateDir, repoDir) {
  const r = gatehouse(['runs', '--json', '--state-dir', stateDir], { cwd: repoDir, capture: true });
  const runs = r.status === 0 ? JSON.parse(r.stdout || '[]') : [];
  return runs.find((run) => run.parentRunId === null)?.runId;
}

/**
 * Writes the report (Markdown to the step summary and the artifact, JSON to the artifact), the
 * pending requests of a paused run with how to answer them, and meta.json; returns the exit code.
 */
export function finish({ exitCode, runId, repoDir, meta }) {
  const { dir, stateDir, meta: metaFile } = artifactPaths();
  const status = STATUS[exitCode] ?? `exit ${exitCode}`;
  setOutput('exit-code', exitCode);
  setOutput('status', status);
  if (!runId) {
    appendSummary(`### gatehouse: no run was recorded\n\ngatehouse exited ${exitCode} (${status}) before a run began; `
      + 'the job log says why.\n');
    return exitCode;
  }
  setOutput('run-id', runId);
  const md = path.join(dir, 'report.md');
  const report = gatehouse(['report', runId, '--format', 'md', '--out', md, '--state-dir', stateDir], { cwd: repoDir });
  gatehouse(['report', runId, '--format', 'json', '--out', path.join(dir, 'report.json'), '--state-dir', stateDir], {
    cwd: repoDir,
  });
  if (report.status === 0 && existsSync(md)) appendSummary(readFileSync(md, 'utf8'));
  else appendSummary(`### gatehouse run ${runId}: ${status}\n\nThe report could not be written; see the job log.\n`);

  let pending = [];
  if (exitCode === 3) {
    const list = gatehouse(['approvals', runId, '--json', '--state-dir', stateDir], { cwd: repoDir, capture: true });
    pending = list.stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    appendSummary(pausedHelp(runId, pending));
  }
  const githubRunId = process.env.GITHUB_RUN_ID ?? null;
  writeFileSync(
    metaFile,
    `${JSON.stringify({ ...meta, runId, exitCode, status, githubRunId, pending }, null, 2)}\n`,
  );
  return exitCode;
}

function pausedHelp(runId, pending) {
  const origin = process.env.GITHUB_RUN_ID ?? 'THIS_RUN_ID';
  const workflow = process.env.GATEHOUSE_WORKFLOW_FILE || 'gatehouse.yml';
  const lines = ['', '### Waiting for approval', '', 'A maintainer answers each request; the run then resumes.', ''];
  for (const p of pending) {
    lines.push(`- \`${p.requestId}\`: ${String(p.tool ?? '').replace(/[`\r\n]/g, ' ')}`);
    lines.push('  ```sh');
    lines.push(`  gh workflow run ${workflow} -f origin=${origin} -f run=${runId} \\`);
    lines.push(`    -f request=${p.requestId} -f decision=approve`);
    lines.push('  ```');
  }
  lines.push('', 'or use "Run workflow" on the Actions page with the same values.', '');
  return lines.join('\n');
}
