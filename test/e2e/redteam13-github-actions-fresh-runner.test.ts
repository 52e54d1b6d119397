import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { askingScript, checkout, outputs, runner, step } from '../support/github-actions';

/**
 * Red team (issue 13): on GitHub the answer job runs on a fresh runner. Its gatehouse has its own
 * log key and heads directory (~/.config/gatehouse), and the paused run arrives as a downloaded
 * copy of the artifact. The example's own e2e test runs both jobs with one key; here each job has
 * its own, as on GitHub.
 */
type Event = { type: string; data: Record<string, unknown> };

/** A runner's own gatehouse configuration home: its key and heads, as on a fresh machine. */
function freshHome(): { XDG_CONFIG_HOME: string } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gh-actions-home-'));
  return { XDG_CONFIG_HOME: path.join(home, '.config') };
}

describe('red team: the answer job on a fresh runner', () => {
  it('resumes a paused run from a downloaded artifact with its own log key, and finishes', async () => {
    const homes = [freshHome(), freshHome()] as const;
    const first = runner({ GITHUB_EVENT_NAME: 'issue_comment', GITHUB_RUN_ID: '2001', ...homes[0] });
    const sha = checkout(first.workspace);
    const run = await step(
      first,
      'run.mjs',
      {},
      {
        GATEHOUSE_TASK_TEXT: 'record a run',
        GATEHOUSE_SHA: sha,
        GATEHOUSE_REPO: 'repo',
        GATEHOUSE_MODEL: `scripted:${askingScript()}`,
      },
    );
    expect(run.status, run.stderr).toBe(3);
    const runId = outputs(first)['run-id']?.[0] ?? '';
    const uploaded = path.join(first.temp, 'gatehouse');
    const requestId = (
      JSON.parse(readFileSync(path.join(uploaded, 'meta.json'), 'utf8')) as {
        pending: Array<{ requestId: string }>;
      }
    ).pending[0]!.requestId;

    const second = runner({ GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_RUN_ID: '2002', ...homes[1] });
    const downloaded = path.join(second.temp, 'gatehouse');
    cpSync(uploaded, downloaded, { recursive: true });
    const answer = await step(
      second,
      'answer.mjs',
      {},
      {
        GATEHOUSE_ARTIFACT_DIR: downloaded,
        GATEHOUSE_REPO: path.join(first.workspace, 'repo'),
        INPUT_RUN: runId,
        INPUT_REQUEST: requestId,
        INPUT_DECISION: 'approve',
      },
    );
    expect(answer.status, `${answer.stdout}\n${answer.stderr}`).toBe(0);
    const log = readFileSync(path.join(downloaded, 'state/runs', runId, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Event);
    expect(log.filter((e) => e.type === 'run.completed').map((e) => e.data.status)).toEqual(['final']);
    // Two installations, two keys: the test would prove nothing if both jobs had used one.
    const keys = homes.map((h) => readFileSync(path.join(h.XDG_CONFIG_HOME, 'gatehouse/log.key'), 'utf8'));
    expect(keys[0]).not.toBe(keys[1]);
  });
});
