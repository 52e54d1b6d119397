import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EventDataOf } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { runDir } from '../../src/events/paths';
import { buildReport } from '../../src/report/build-report';
import { renderMarkdown } from '../../src/report/render-markdown';
import { tempStateDir } from '../events/helpers';
import { done, hex, leaf, spawn } from '../events/lineage-harness';

/**
 * A run's log with something in every section of the report, written event by event the way the
 * pipeline, the delegator and the loop write them. `text` supplies every string the model or the
 * repository controls, so the same run can be written plain or hostile. `legacy` leaves out what
 * issue 13 added (decidedBy, usage, run.check, feedback kind and claims, cached tokens and cost).
 */
export interface RunText {
  task: string;
  answer: string;
  command: (n: number) => string;
  output: string;
  file: string;
  diff: string;
  reason: string;
  approver: string;
  claim: string;
}

export const PLAIN: RunText = {
  task: 'fix the failing test in src/math.js',
  answer: 'Fixed add() in src/math.js (obs-4). The tests pass (obs-5).',
  command: (n) => ['npm test', 'rm -rf /tmp/x', 'npm publish', 'curl example.test', 'npm test'][n] ?? `echo ${n}`,
  output: 'not ok 1 - add\n# fail 1\n',
  file: 'src/math.js',
  diff: '--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1 @@\n-  return a - b;\n+  return a + b;\n',
  reason: 'no network from this run',
  approver: 'alice',
  claim: 'All tests pass',
};

export const ROOT = 'run_report_root';
export const CHILD = 'run_report_child';

const usage = (legacy: boolean, i: number): EventDataOf<'model.output'>['usage'] =>
  legacy
    ? { inputTokens: 1000 * i, outputTokens: 100 * i }
    : { inputTokens: 1000 * i, outputTokens: 100 * i, cachedInputTokens: 10 * i, costUsd: 0.01 * i };

export function writeRun(state: string, t: RunText = PLAIN, o: { legacy?: boolean } = {}): string {
  const legacy = o.legacy ?? false;
  const log = RunLog.create(state, ROOT);
  log.append('run.started', 'user', {
    task: t.task,
    mode: 'confirm-novel',
    surface: ['bash', 'read_file', 'edit_file', 'delegate'],
    repo: '/repo',
    model: 'scripted:demo.json',
    budgets: { maxTurns: 30, maxToolCalls: 100, maxTokens: 2_000_000, wallClockMs: 1_800_000, maxCostUsd: 2 },
    config: {
      source: 'test',
      sha256: hex('c'),
      ignored: [],
      environment: {
        image: 'preset:node',
        setup: [],
        check: 'npm test',
        egress: { setup: [], agent: [], deny: [] },
        copy: { exclude: [], include: [] },
        limits: {},
        setupSecrets: [],
      },
    },
  });
  let turn = 0;
  let obs = 0;
  const model = (text: string) => {
    turn += 1;
    log.append('model.output', 'model', {
      turn,
      text,
      toolCalls: [],
      stopReason: 'tool_use',
      usage: usage(legacy, turn),
      retries: 0,
    });
  };
  const observe = (callId: string, tool: string, outcome: EventDataOf<'tool.observation'>['outcome'], content = '') =>
    log.append('tool.observation', 'runtime', {
      callId,
      observationId: `obs-${++obs}`,
      tool,
      outcome,
      content,
      truncated: false,
    });
  const intent = (callId: string, tool: string, input: unknown, actor: 'model' | 'runtime' = 'model') =>
    log.append('tool.intent', actor, { callId, turn, tool, input });
  const validated = (callId: string, input: unknown) =>
    log.append('tool.validation', 'runtime', { callId, ok: true, stage: 'semantic', errors: [], input });
  const decide = (callId: string, decision: 'allow' | 'ask' | 'deny', policyId: string, reason = 'r') =>
    log.append('tool.approval', 'policy', { callId, decision, policyId, reason, actionHash: hex('a') });
  const execute = (
    callId: string,
    approvalId: string,
    input: unknown,
    exitCode: number,
    filesChanged: string[] = [],
  ) => {
    log.append('tool.execution.started', 'runtime', {
      callId,
      invocationId: `inv-${callId}`,
      executor: 'sandbox',
      primitive: 'exec',
      input,
      timeoutMs: 1000,
      approvalId,
    });
    log.append('tool.execution.completed', 'sandbox', {
      callId,
      invocationId: `inv-${callId}`,
      status: 'ok',
      exitCode,
      signal: null,
      durationMs: 12,
      bytes: 10,
      truncated: false,
      filesChanged,
      artifactRefs: [],
    });
  };
  /** A call the policy allows, run to an exit. */
  const allowed = (
    callId: string,
    tool: string,
    input: unknown,
    exitCode: number,
    content: string,
    actor?: 'runtime',
  ) => {
    intent(callId, tool, input, actor);
    validated(callId, input);
    const a = decide(callId, 'allow', 'builtin:allow-tests');
    execute(callId, a.id, input, exitCode, tool === 'edit_file' ? [t.file] : []);
    return observe(callId, tool, exitCode === 0 ? 'ok' : 'failed', content);
  };
  const ask = (callId: string, requestId: string, input: unknown) => {
    intent(callId, 'bash', input);
    validated(callId, input);
    decide(callId, 'ask', 'mode:confirm-novel');
    log.append('approval.requested', 'runtime', {
      requestId,
      callId,
      tool: 'bash',
      input,
      actionHash: hex('a'),
      executionHash: hex('e'),
      rule: 'mode:confirm-novel',
      reason: 'a new kind of action',
      risk: [],
      shape: 'bash:npm',
      lineage: [ROOT],
    });
  };

  model('run the tests');
  const first = allowed('call_1', 'bash', { command: t.command(0) }, 1, t.output);
  model('read and fix');
  allowed('call_2', 'read_file', { path: t.file }, 0, 'export function add(a, b) {');
  allowed('call_3', 'edit_file', { path: t.file, oldText: '-', newText: '+' }, 0, 'edited');
  intent('call_4', 'bash', { command: t.command(1) });
  validated('call_4', { command: t.command(1) });
  decide('call_4', 'deny', 'deny-rm', `never remove files: ${t.reason}`);
  observe('call_4', 'bash', 'denied', 'denied');
  ask('call_5', 'req_1', { command: t.command(2) });
  const grant = log.append('approval.granted', 'user', {
    requestId: 'req_1',
    callId: 'call_5',
    actionHash: hex('a'),
    executionHash: hex('e'),
    scope: 'once',
    approver: t.approver,
    channel: 'cli',
    reason: 'release day',
  });
  execute('call_5', grant.id, { command: t.command(2) }, 0);
  observe('call_5', 'bash', 'ok', 'published');
  ask('call_6', 'req_2', { command: t.command(3) });
  log.append('approval.rejected', 'runtime', { requestId: 'req_2', channel: 'nats', reason: 'bad signature' });
  log.append('approval.denied', 'user', {
    requestId: 'req_2',
    callId: 'call_6',
    actionHash: hex('a'),
    approver: 'bob',
    channel: 'cli',
    reason: t.reason,
  });
  observe('call_6', 'bash', 'denied', 'denied by bob');
  intent('call_7', 'bsah', { command: 'ls' });
  log.append('tool.validation', 'runtime', {
    callId: 'call_7',
    ok: false,
    stage: 'known',
    errors: [{ path: '', code: 'unknown_tool', message: 'no such tool bsah; did you mean bash?' }],
  });
  observe('call_7', 'bsah', 'rejected', 'no such tool');
  // A sub-agent, spawned and completed as the delegator writes it.
  intent('call_8', 'delegate', { task: 'list files' });
  validated('call_8', { task: 'list files' });
  decide('call_8', 'allow', 'builtin:delegate');
  log.append('agent.spawned', 'runtime', spawn(ROOT, CHILD, 'call_8', 1));
  leaf(state, ROOT, CHILD, 'call_8', 1, [ROOT, CHILD]);
  log.append('agent.completed', 'runtime', {
    ...done(ROOT, CHILD, 'call_8', 'final', `${CHILD} done`),
    withheld: ['outside.txt'],
    denied: ['bash rm -rf: denied by deny-rm'],
  });
  observe('call_8', 'delegate', 'ok', 'child done');
  if (!legacy) {
    log.append('run.check', 'runtime', {
      command: t.command(0),
      ranBy: 'model',
      callId: 'call_1',
      observationId: first.data.observationId,
      exitCode: 1,
      passed: false,
    });
    model('done');
    log.append('run.feedback', 'runtime', {
      turn,
      reason: 'a claim cites a failed observation',
      kind: 'contract',
      claims: [
        { claim: t.claim, cites: ['obs-1'], supported: false, reason: 'obs-1 exited 1' },
        { claim: 'Fixed add()', cites: ['obs-3'], supported: true },
      ],
    });
  } else {
    model('done');
    log.append('run.feedback', 'runtime', { turn, reason: 'a claim cites a failed observation' });
  }
  // The check again, run by gatehouse itself before finishing, through the same pipeline.
  const last = allowed('check_1', 'bash', { command: t.command(4) }, 0, `${t.output}\n# pass 2`, 'runtime');
  if (!legacy)
    log.append('run.check', 'runtime', {
      command: t.command(4),
      ranBy: 'gatehouse',
      callId: 'check_1',
      observationId: last.data.observationId,
      exitCode: 0,
      passed: true,
    });
  writeFileSync(path.join(runDir(state, ROOT), 'changes.diff'), t.diff);
  log.append('run.completed', 'runtime', {
    status: 'final',
    stopReason: 'final_answer',
    answer: t.answer,
    filesChanged: [t.file],
    applied: false,
    diffFile: 'changes.diff',
    refused: [{ path: `.env-${t.file}`, reason: 'protected by the policy' }],
    skipped: [{ path: 'big.bin', size: 99_000_000, reason: 'too large' }],
    ...(legacy
      ? {}
      : {
          decidedBy: 'check',
          usage: { inputTokens: 6000, outputTokens: 600, cachedInputTokens: 60, costUsd: 0.06 },
        }),
  });
  log.close();
  return ROOT;
}

/** Markup a model or a repository could plant, each piece trying to escape where the report puts it. */
export const HOSTILE_PIECES = [
  '`````` six backticks ``` three `` two ` one',
  '</details></summary></code></pre>',
  '<img src="http://127.0.0.1:9/img.png" onerror="window.__pwned=1">',
  '<script>window.__pwned = 1</script>',
  '@org/team and @someone, please look',
  '[click](javascript:window.__pwned=1) ![pic](http://127.0.0.1:9/pic.png)',
  '<a href="http://127.0.0.1:9/">link</a> http://127.0.0.1:9/auto www.example.test',
  '<iframe src="http://127.0.0.1:9/frame"></iframe><details open><summary>fake</summary>',
  '\u001b[31mred\u001b[0m \u202eevil\u202c bell\u0007 nul\u0000 cr\rover',
];
export const HOSTILE = HOSTILE_PIECES.join('\n');

/** A diff far over any comment's size, hostile on every few lines. */
export function hostileDiff(lines: number): string {
  const out = ['--- a/x.js', '+++ b/x.js', `@@ -1,${lines} +1,${lines} @@`];
  for (let i = 0; i < lines; i++) out.push(`+${HOSTILE_PIECES[i % HOSTILE_PIECES.length]} line ${i}`);
  return `${out.join('\n')}\n`;
}

export const HOSTILE_TEXT: RunText = {
  task: `${HOSTILE}\n${'long task '.repeat(500)}`,
  answer: `${HOSTILE}\n${'long answer '.repeat(2000)}`,
  command: (n) => `${HOSTILE_PIECES[n % HOSTILE_PIECES.length]}; ${HOSTILE}`,
  output: `${HOSTILE}\n`.repeat(50),
  file: `${HOSTILE_PIECES[1]}\n# heading @org/team.js`,
  diff: hostileDiff(30_000),
  reason: HOSTILE,
  approver: '@org/admins <b>x</b>',
  claim: HOSTILE,
};

/** The Markdown report of a run written with HOSTILE_TEXT. */
export function hostileMarkdown(): string {
  const state = tempStateDir();
  writeRun(state, HOSTILE_TEXT);
  return renderMarkdown(buildReport(state, ROOT));
}

/** Markup aimed at the places an HTML page puts text: a script, a comment, a style, a title, an attribute. */
export const HTML_HOSTILE = [
  HOSTILE,
  '</script><img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>',
  '<!-- an open comment that would swallow the page',
  '<a href="javascript:window.__pwned=3">click</a> javascript:window.__pwned=4',
  '</style><style>body{background:url(http://127.0.0.1:9/css)}</style></title></textarea>',
  '" onmouseover="window.__pwned=5" x=\' onfocus=\'window.__pwned=6',
  '<svg onload=window.__pwned=7></svg><math><mi xlink:href="javascript:alert(1)">m</mi></math>',
  '\u202egnp.exe\u202c \u2066isolate\u2069 zero\u200bwidth',
].join('\n');

export const HTML_HOSTILE_TEXT: RunText = {
  ...HOSTILE_TEXT,
  task: HTML_HOSTILE,
  answer: HTML_HOSTILE,
  command: (n) => `echo ${n} '${HTML_HOSTILE}'`,
  output: `${HTML_HOSTILE}\n`.repeat(20),
  reason: HTML_HOSTILE,
  approver: '<b>mallory</b>" onclick="window.__pwned=8',
  claim: HTML_HOSTILE,
};
