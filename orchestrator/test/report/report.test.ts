import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunLog } from '../../src/events/index';
import { RunNotFoundError } from '../../src/events/run-ref';
import { buildReport } from '../../src/report/build-report';
import { renderMarkdown } from '../../src/report/render-markdown';
import { REPORT_VERSION, RunReport } from '../../src/report/report-schema';
import { reportCommand } from '../../src/cli/report-command';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { tempStateDir } from '../events/helpers';
import { CHILD, PLAIN, ROOT, writeRun } from './report-harness';

describe('gatehouse report: the facts, from the log', () => {
  it('has every section of a run that carries the issue-13 fields, and fits its schema', () => {
    const state = tempStateDir();
    writeRun(state);
    const r = RunReport.parse(JSON.parse(JSON.stringify(buildReport(state, ROOT))));
    expect(r.version).toBe(REPORT_VERSION);
    expect(r.outcome).toEqual({ status: 'final', stopReason: 'final_answer', decidedBy: 'check', exitCode: 0 });
    expect(r.answer).toBe(PLAIN.answer);
    expect(r.run).toMatchObject({ task: PLAIN.task, model: 'scripted:demo.json', toolCalls: 9 });
    expect(r.run.toolCallsByTool).toEqual({ bash: 5, read_file: 1, edit_file: 1, bsah: 1, delegate: 1 });
    expect(r.check.result).toBe('passed');
    expect(r.check.configured).toBe('npm test');
    expect(r.check.runs.map((c) => [c.ranBy, c.callId, c.exitCode, c.passed])).toEqual([
      ['model', 'call_1', 1, false],
      ['gatehouse', 'check_1', 0, true],
    ]);
    expect(r.check.output).toContain('# pass 2');
    expect(r.feedback).toEqual([
      {
        turn: 3,
        kind: 'contract',
        reason: 'a claim cites a failed observation',
        claims: [
          { claim: 'All tests pass', cites: ['obs-1'], supported: false, reason: 'obs-1 exited 1' },
          { claim: 'Fixed add()', cites: ['obs-3'], supported: true, reason: null },
        ],
      },
    ]);
    expect(r.changes).toMatchObject({ files: ['src/math.js'], applied: false, diffFile: 'changes.diff' });
    expect(r.changes.diff).toBe(PLAIN.diff);
    expect(r.changes.diffTruncated).toBe(false);
    expect(r.commands.map((c) => [c.callId, c.command, c.exitCode, c.status, c.ranBy])).toEqual([
      ['call_1', 'npm test', 1, 'ok', 'model'],
      ['call_4', 'rm -rf /tmp/x', null, 'not_run', 'model'],
      ['call_5', 'npm publish', 0, 'ok', 'model'],
      ['call_6', 'curl example.test', null, 'not_run', 'model'],
      ['check_1', 'npm test', 0, 'ok', 'gatehouse'],
    ]);
    expect(r.approvals).toEqual([
      expect.objectContaining({
        requestId: 'req_1',
        status: 'granted',
        approver: 'alice',
        channel: 'cli',
        scope: 'once',
      }),
      expect.objectContaining({ requestId: 'req_2', status: 'denied', approver: 'bob', reason: PLAIN.reason }),
    ]);
    expect(r.refusals.map((x) => [x.kind, x.callId ?? x.path, x.by])).toEqual([
      ['policy', 'call_4', 'deny-rm'],
      ['answer_rejected', null, 'nats'],
      ['person', 'call_6', 'bob via cli'],
      ['rejected', 'call_7', 'validation (known)'],
      ['sub_agent', 'outside.txt', CHILD],
      ['sub_agent', null, CHILD],
      ['apply', '.env-src/math.js', null],
      ['not_exported', 'big.bin', null],
    ]);
    expect(r.usage).toEqual({
      inputTokens: 6000,
      outputTokens: 600,
      cachedInputTokens: 60,
      costUsd: 0.06,
      source: 'run',
      budgets: { maxTokens: 2_000_000, maxCostUsd: 2 },
    });
    expect(r.agents.runId).toBe(ROOT);
    expect(r.agents.children.map((c) => [c.runId, c.status, c.actions])).toEqual([[CHILD, 'final', 1]]);
  });

  it('says so in Markdown, section by section', () => {
    const state = tempStateDir();
    writeRun(state);
    const md = renderMarkdown(buildReport(state, ROOT));
    for (const s of [
      '## ✅ gatehouse run `run_report_root`: final',
      '**Outcome:** final (exit 0), stop reason `final_answer`; decided by `check`.',
      '**Result: passed** (configured: `npm test`)',
      '- failed: `npm test`, exit 1, run by model (call `call_1`, `obs-1`)',
      '- passed: `npm test`, exit 0, run by gatehouse (call `check_1`, `obs-9`)',
      '  - **not supported**: `All tests pass`, cites `obs-1`: `obs-1 exited 1`',
      '- file `src/math.js`',
      '<details><summary>Diff: 5 lines</summary>',
      '+  return a + b;',
      '- exit 1: `npm test` (call `call_1`, `obs-1`)',
      '- not run (denied): `rm -rf /tmp/x` (call `call_4`, `obs-4`)',
      '- granted by `alice` via `cli` (scope once): `bash` request `req_1`',
      '- denied by policy `bash` call `call_4` by `deny-rm`',
      '- denied by a person `bash` call `call_6` by `bob via cli`',
      '- rejected `bsah` call `call_7` by `validation (known)`',
      '- not applied file `.env-src/math.js`: `protected by the policy`',
      '| 6,000 | 600 | 60 | $0.0600 |',
      '  - run `run_report_child`: final (`final_answer`), 1 action(s)',
    ])
      expect(md).toContain(s);
    // The diff is folded away: between its <details> and </details>.
    const diffAt = md.indexOf('+  return a + b;');
    expect(md.lastIndexOf('<details>', diffAt)).toBeGreaterThan(md.lastIndexOf('</details>', diffAt));
  });

  it('reports a run written before the issue-13 fields, saying what is not recorded', () => {
    const state = tempStateDir();
    writeRun(state, PLAIN, { legacy: true });
    const r = buildReport(state, ROOT);
    expect(r.outcome.decidedBy).toBeNull();
    expect(r.check).toMatchObject({ configured: 'npm test', result: 'not_recorded', runs: [], output: null });
    expect(r.feedback).toEqual([{ turn: 3, kind: null, reason: 'a claim cites a failed observation', claims: null }]);
    // Summed from model.output: turns 1..3 used 1000·i input and 100·i output tokens.
    expect(r.usage).toMatchObject({
      inputTokens: 6000,
      outputTokens: 600,
      cachedInputTokens: null,
      costUsd: null,
      source: 'turns',
    });
    const md = renderMarkdown(r);
    expect(md).toContain('stop reason `final_answer`; the rule that decided is not recorded.');
    expect(md).toContain('its result is not recorded (the log has no run.check)');
    expect(md).toContain('- turn 3 (kind not recorded)');
    expect(md).toContain('| 6,000 | 600 | not recorded | not recorded |');
    expect(md).toContain("_Summed from the model's turns: the log's run.completed has no usage._");
  });

  it('sums cost from the turns only when every turn that used tokens recorded one', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'run_costs');
    log.append('run.started', 'user', { task: 't', mode: 'confirm-novel', surface: [] });
    const out = (turn: number, costUsd?: number) =>
      log.append('model.output', 'model', {
        turn,
        text: '',
        toolCalls: [],
        stopReason: 'end_turn',
        usage: {
          inputTokens: 10,
          outputTokens: 1,
          cachedInputTokens: 2,
          ...(costUsd !== undefined ? { costUsd } : {}),
        },
        retries: 0,
      });
    out(1, 0.5);
    out(2, 0.25);
    expect(buildReport(state, 'run_costs').usage).toMatchObject({ costUsd: 0.75, cachedInputTokens: 4 });
    out(3);
    log.close();
    const r = buildReport(state, 'run_costs');
    expect(r.usage).toMatchObject({ inputTokens: 30, costUsd: null, source: 'turns' });
    // Still running: no outcome yet, nothing exported, no exit code.
    expect(r.outcome).toEqual({ status: 'running', stopReason: null, decidedBy: null, exitCode: null });
    expect(r.changes.files).toBeNull();
    expect(renderMarkdown(r)).toContain('**Outcome:** running; not decided yet.');
  });

  it('a paused run: exit 3, the pending request, no answer yet', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'run_paused');
    log.append('run.started', 'user', { task: 't', mode: 'confirm-each', surface: ['bash'] });
    log.append('run.paused', 'runtime', { pending: ['req_1'], workspace: { dir: null, files: [], deleted: [] } });
    log.close();
    const r = buildReport(state, 'run_paused');
    expect(r.outcome).toMatchObject({ status: 'paused', exitCode: 3 });
    expect(renderMarkdown(r)).toContain('_The run has not finished._');
  });

  it('does not follow a diff file named outside the run directory', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'run_escape');
    log.append('run.started', 'user', { task: 't', mode: 'confirm-each', surface: [] });
    log.append('run.completed', 'runtime', { status: 'final', stopReason: 'final_answer', diffFile: '../../x.diff' });
    log.close();
    const r = buildReport(state, 'run_escape');
    expect(r.changes).toMatchObject({ diff: null, diffError: 'outside the run directory' });
  });
});

describe('reportCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes --out atomically (no temporary file left) and prints to stdout without it', () => {
    const state = tempStateDir();
    writeRun(state);
    const dir = path.join(state, 'out');
    mkdirSync(dir);
    const file = path.join(dir, 'report.json');
    expect(reportCommand(ROOT, { format: 'json', out: file, stateDir: state })).toBe(0);
    expect(RunReport.parse(JSON.parse(readFileSync(file, 'utf8'))).run.runId).toBe(ROOT);
    expect(reportCommand('run_report_r', { format: 'md', out: file, stateDir: state })).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/^## ✅ gatehouse run/);
    expect(readdirSync(dir)).toEqual(['report.json']);

    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    expect(reportCommand('latest', { format: 'md', stateDir: state })).toBe(0);
    expect(out.join('')).toBe(readFileSync(file, 'utf8'));
  });

  it('a run that is not there exits 1; an --out in a missing directory exits 2 and writes nothing', () => {
    const state = tempStateDir();
    writeRun(state);
    const missing = (() => {
      try {
        reportCommand('run_nope', { format: 'md', stateDir: state });
      } catch (e) {
        return e;
      }
    })();
    expect(missing).toBeInstanceOf(RunNotFoundError);
    expect(exitCodeOfError(missing)).toBe(1);
    const target = path.join(state, 'no-such-dir', 'r.md');
    let thrown: unknown;
    try {
      reportCommand(ROOT, { format: 'md', out: target, stateDir: state });
    } catch (e) {
      thrown = e;
    }
    expect(exitCodeOfError(thrown)).toBe(2);
    expect(String((thrown as Error).message)).toContain('give --out a file in a directory that exists');
    expect(existsSync(path.dirname(target))).toBe(false);
  });
});
