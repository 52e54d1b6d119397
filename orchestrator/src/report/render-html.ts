import { createHash } from 'node:crypto';
import type { RunReport } from './report-schema';
import { markup, SafeHtml } from './html-escape';
import { badge, clock, count, foldedText } from './html-parts';
import { REPORT_CSS } from './html-style';
import { agentSectionHtml, agentsOf, anchorsOf, lineageHtml, STATUS_TONE, VERDICT_TONE } from './html-tree';
import { planHtml } from './html-plan';
import { approvalsHtml, changesHtml, treeCost, usageHtml, verifyHtml } from './html-sections';

/**
 * The report of a whole tree as one self-contained HTML page: no script, no request of any kind.
 * The Content-Security-Policy forbids every load (scripts, images, fonts, frames, connections,
 * forms, a <base>) and allows exactly the inline style sheet, by its hash; so even markup that got
 * through escaping could neither run nor fetch anything. Folding is <details>, the filter is CSS.
 */
const STYLE_HASH = createHash('sha256').update(REPORT_CSS).digest('base64');
export const REPORT_CSP =
  `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; script-src 'none'; img-src 'none'; font-src 'none'; ` +
  `connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; child-src 'none'; ` +
  `worker-src 'none'; manifest-src 'none'; base-uri 'none'; form-action 'none'`;

const VERDICT_ORDER = ['failed', 'not_checked', 'unanchored', 'intact'] as const;

export function renderHtml(r: RunReport): string {
  const agents = agentsOf(r.agents);
  const anchors = anchorsOf(r.agents);
  const o = r.outcome;
  const worst = VERDICT_ORDER.find((v) => agents.some((a) => a.verify.verdict === v)) ?? 'intact';
  const input = agents.reduce((n, a) => n + a.usage.inputTokens, 0);
  const output = agents.reduce((n, a) => n + a.usage.outputTokens, 0);
  const refused = agents.reduce((n, a) => n + a.refusals.length, 0);
  const asked = agents.reduce((n, a) => n + a.calls.filter((c) => c.approval).length, 0);
  const body = markup`<main>
    <header>
      <h1>${badge(o.status, STATUS_TONE[o.status])} gatehouse run <span class="mono">${r.run.runId}</span></h1>
      <dl class="facts">
        <dt>task</dt>
        <dd>${foldedText(r.run.task, 'Task', 'task')}</dd>
        <dt>outcome</dt>
        <dd>${outcomeLine(r)}</dd>
        <dt>model</dt>
        <dd>${modelLine(r)}</dd>
        <dt>check</dt>
        <dd>${checkLine(r)}</dd>
        <dt>tree</dt>
        <dd>${count(agents.length)} agent(s); ${count(asked)} approval(s) asked, ${count(refused)} refusal(s)</dd>
        <dt>tokens</dt>
        <dd>${count(input)} in, ${count(output)} out; cost ${treeCost(agents)} (whole tree)</dd>
        <dt>verify</dt>
        <dd>
          ${badge(worst.replace('_', ' '), VERDICT_TONE[worst])}
          <span class="muted">the worst verdict of the tree's ${count(agents.length)} log(s)</span>
        </dd>
        <dt>time</dt>
        <dd>${r.run.startedAt ?? ''} → ${clock(r.run.lastEventAt)}</dd>
      </dl>
    </header>
    <nav class="toc">
      <a href="#answer">Answer</a>${r.plan ? markup`<a href="#plan">Plan</a>` : ''}<a href="#lineage">Lineage</a
      ><a href="#approvals">Approvals</a
      ><a href="#changes">Changes</a><a href="#usage">Tokens and cost</a><a href="#verify">Verify</a
      ><a href="#timeline">Timeline</a>
    </nav>
    <section id="answer">
      <h2>Answer</h2>
      ${r.answer !== null ? foldedText(r.answer, 'Answer', 'answer') : markup`<p class="muted">No answer.</p>`}
    </section>
    ${
      r.plan
        ? markup`<section id="plan">
          <h2>Plan: the gate, each task, recovery</h2>
          ${planHtml(r.plan)}
        </section>`
        : ''
    }
    <section id="lineage">
      <h2>Lineage: the agents and their handoffs</h2>
      ${lineageHtml(r.agents, anchors)}
    </section>
    <section id="approvals">
      <h2>Approvals</h2>
      ${approvalsHtml(agents, anchors)}
    </section>
    <section id="changes">
      <h2>Changes</h2>
      ${changesHtml(r)}
    </section>
    <section id="usage">
      <h2>Tokens and cost</h2>
      ${usageHtml(r, agents, anchors)}
    </section>
    <section id="verify">
      <h2>Verify</h2>
      <p class="small muted">
        What <code>gatehouse verify RUN</code> finds in each log of the tree, when this report was written.
      </p>
      ${verifyHtml(agents, anchors)}
    </section>
    <section id="timeline">
      <h2>Timeline: every call, intent → validation → decision → execution → observation</h2>
      <p class="filter">
        <label><input type="checkbox" id="only-stopped" /> show only the calls that were refused or are waiting</label>
      </p>
      ${agents.map((a) => agentSectionHtml(a, anchors))}
    </section>
    <footer>
      gatehouse report, format ${r.format} v${count(r.version)};
      <code>gatehouse report ${r.run.runId} --format json</code> gives every fact. Everything the model or the
      repository wrote is shown as text.
    </footer>
  </main>`;
  // The style sheet and the policy are ours and constant: inserted as they are (a <style> decodes no entities).
  const page = markup`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gatehouse run ${r.run.runId}: ${o.status}</title>
<style>${new SafeHtml(REPORT_CSS)}</style>
</head>
<body>
${body}
</body>
</html>
`;
  return page.value;
}

const CHECK_TONE = { passed: 'ok', failed: 'bad', not_recorded: 'warn', none: 'neutral' } as const;

function outcomeLine(r: RunReport): SafeHtml {
  const o = r.outcome;
  return markup`${[
    markup`<strong>${o.status}</strong>`,
    o.exitCode !== null ? ` (exit ${o.exitCode})` : '',
    o.stopReason ? markup`, stop reason <code>${o.stopReason}</code>` : '',
    o.decidedBy ? markup`; decided by <code>${o.decidedBy}</code>` : '; the rule that decided is not recorded',
  ]}`;
}

function modelLine(r: RunReport): SafeHtml {
  return markup`${[
    r.run.model !== null ? markup`<code>${r.run.model}</code>` : 'not recorded',
    r.run.mode ? markup`, mode <code>${r.run.mode}</code>` : '',
    `; ${count(r.run.turns)} turns, ${count(r.run.toolCalls)} tool calls`,
  ]}`;
}

function checkLine(r: RunReport): SafeHtml {
  const c = r.check;
  if (c.result === 'none') return markup`none configured`;
  const configured = c.configured ? markup` <code>${c.configured}</code>` : '';
  return markup`${badge(c.result.replace('_', ' '), CHECK_TONE[c.result])}${configured}`;
}
