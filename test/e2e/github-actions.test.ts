import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { askingScript, checkout, outputs, runner, step } from '../support/github-actions';

/**
 * The example workflow's run and answer jobs (examples/github-actions/), under CI-like conditions:
 * CI=true, no TTY or standard input, the runner's files, the artifact as a directory handed from
 * one job to the next. A run that asks pauses (exit 3) with how to answer it on its summary; the
 * answer job records a maintainer's approval, resumes, and the run finishes.
 */
type Event = { type: string; data: Record<string, unknown> };

const events = (file: string): Event[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Event);

describe('the example workflow, run under CI-like conditions', () => {
  it('pauses on an ask, is answered through workflow_dispatch by a maintainer, resumes and finishes', async () => {
    const first = runner({ GITHUB_EVENT_NAME: 'issue_comment', GITHUB_RUN_ID: '1001' });
    const sha = checkout(first.workspace);
    mkdirSync(path.join(first.workspace, 'trusted/.github/gatehouse'), { recursive: true });
    writeFileSync(path.join(first.workspace, 'trusted/.github/gatehouse/config.json'), '{ "image": "preset:node" }\n');
    const model = `scripted:${askingScript()}`;
    const run = await step(
      first,
      'run.mjs',
      {},
      {
        GATEHOUSE_TASK_TEXT: 'record a run',
        GATEHOUSE_SHA: sha,
        GATEHOUSE_REPO: 'repo',
        GATEHOUSE_CONFIG: 'trusted/.github/gatehouse/config.json',
        GATEHOUSE_MODEL: model,
      },
    );
    expect(run.status, run.stderr).toBe(3);
    const out = outputs(first);
    const runId = out['run-id']?.[0] ?? '';
    expect(runId).toMatch(/^run_/);
    expect(out['exit-code']).toEqual(['3']);
    const artifact = path.join(first.temp, 'gatehouse');
    const meta = JSON.parse(readFileSync(path.join(artifact, 'meta.json'), 'utf8')) as {
      runId: string;
      sha: string;
      pending: Array<{ requestId: string }>;
    };
    expect([meta.runId, meta.sha, meta.pending.length]).toEqual([runId, sha, 1]);
    const requestId = meta.pending[0]!.requestId;
    const summary = readFileSync(first.summary, 'utf8');
    // The report (gatehouse report) comes first, then how to answer the paused run.
    expect(summary).toContain(runId);
    expect(summary).not.toContain('The report could not be written');
    expect(existsSync(path.join(artifact, 'report.md'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(artifact, 'report.json'), 'utf8'))).toMatchObject({ run: { runId } });
    expect(summary).toContain('Waiting for approval');
    expect(summary).toContain(`-f origin=1001 -f run=${runId}`);
    expect(summary).toContain(`-f request=${requestId}`);
    expect(existsSync(path.join(artifact, 'state/runs', runId, 'events.jsonl'))).toBe(true);

    // The answer job: the same workspace paths (as on GitHub), the artifact downloaded into its temp dir.
    const second = runner({ GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_RUN_ID: '1002' });
    const meta2 = await step(second, 'read-artifact-meta.mjs', {}, { GATEHOUSE_ARTIFACT_DIR: artifact });
    expect(meta2.status, meta2.stderr).toBe(0);
    expect(outputs(second).sha).toEqual([sha]);
    const answer = await step(
      second,
      'answer.mjs',
      {},
      {
        GATEHOUSE_ARTIFACT_DIR: artifact,
        GATEHOUSE_REPO: path.join(first.workspace, 'repo'),
        INPUT_RUN: runId,
        INPUT_REQUEST: requestId,
        INPUT_DECISION: 'approve',
      },
    );
    expect(answer.status, answer.stderr).toBe(0);
    expect(outputs(second)['exit-code']).toEqual(['0']);
    const log = events(path.join(artifact, 'state/runs', runId, 'events.jsonl'));
    const granted = log.find((e) => e.type === 'approval.granted');
    expect(granted?.data.approver).toMatch(
      /^user:\S+ for github:octo-maintainer \(workflow_dispatch, GitHub run 1002\)$/,
    );
    expect(log.filter((e) => e.type === 'run.completed').map((e) => e.data.status)).toEqual(['final']);
    const summary2 = readFileSync(second.summary, 'utf8');
    expect(summary2).toContain(runId);
    expect(summary2).not.toContain('The report could not be written');
    expect(summary2).toContain('octo-maintainer');
  });

  it('refuses an answer whose ids do not match the downloaded run, before touching it', async () => {
    const r = runner({ GITHUB_EVENT_NAME: 'workflow_dispatch' });
    const artifact = path.join(r.temp, 'gatehouse');
    mkdirSync(artifact, { recursive: true });
    writeFileSync(path.join(artifact, 'meta.json'), JSON.stringify({ runId: 'run_other', sha: 'a'.repeat(40) }));
    const base = { GATEHOUSE_ARTIFACT_DIR: artifact, GATEHOUSE_REPO: r.workspace, INPUT_REQUEST: 'apr_x' };
    const cases: Array<[Record<string, string>, string]> = [
      [{ INPUT_RUN: 'run_mine', INPUT_DECISION: 'approve' }, 'holds run run_other'],
      [{ INPUT_RUN: 'run_other; rm -rf ~', INPUT_DECISION: 'approve' }, 'not a gatehouse run id'],
      [{ INPUT_RUN: 'run_other', INPUT_DECISION: 'yes' }, 'approve or deny'],
      [{ INPUT_RUN: 'run_other', INPUT_DECISION: 'deny' }, 'needs a reason'],
    ];
    for (const [env, message] of cases) {
      const res = await step(r, 'answer.mjs', {}, { ...base, ...env });
      expect(res.status, JSON.stringify(env)).toBe(1);
      expect(res.stderr).toContain(message);
    }
  });
});
