import type { ReportAgent } from './report-agent-schema';
import { cut } from './markdown-safe';
import { markup, type SafeHtml } from './html-escape';
import { badge, clock, codeList, count, foldedText, money } from './html-parts';
import { timelineHtml } from './html-timeline';

/** The lineage tree of a run's agents, and each agent's own section with its timeline. */

export const STATUS_TONE: Record<ReportAgent['status'], string> = {
  final: 'ok',
  partial: 'warn',
  failed: 'bad',
  cancelled: 'neutral',
  paused: 'warn',
  running: 'info',
};

export const VERDICT_TONE: Record<ReportAgent['verify']['verdict'], string> = {
  intact: 'ok',
  unanchored: 'warn',
  failed: 'bad',
  not_checked: 'warn',
};

/** Every agent of the tree, depth first, the root first. */
export function agentsOf(root: ReportAgent): ReportAgent[] {
  const out: ReportAgent[] = [];
  const visit = (a: ReportAgent) => {
    out.push(a);
    a.children.forEach(visit);
  };
  visit(root);
  return out;
}

/** Run id → the id of its section (our own, so no run id ever lands in an id or a link as it is). */
export function anchorsOf(root: ReportAgent): Map<string, string> {
  return new Map(agentsOf(root).map((a, i) => [a.runId, `agent-${i}`]));
}

export function agentLink(a: ReportAgent, anchors: ReadonlyMap<string, string>): SafeHtml {
  return markup`<a class="mono" href="#${anchors.get(a.runId) ?? ''}">${a.runId}</a>`;
}

function handoffHtml(a: ReportAgent): SafeHtml {
  const h = a.handoff;
  if (!h) return markup`<span class="muted">${a.depth === 0 ? 'the root: started by a person' : 'not recorded'}</span>`;
  const b = h.budget;
  return markup`${[
    markup`tools ${codeList(h.tools)}; paths ${codeList(h.paths, 'all')}; `,
    markup`budget ${count(b.turns)} turns, ${count(b.toolCalls)} tool calls, ${count(b.tokens)} tokens, `,
    markup`${count(b.seconds)} s; policy <code>${h.policy.mode}</code> (${count(h.policy.rules)} rules`,
    h.policy.paths.length ? markup`, paths ${codeList(h.policy.paths)}` : '',
    ')',
    h.evidence.length ? markup`; evidence ${codeList(h.evidence)}` : '',
    markup` <span class="muted small">(delegate call <code>${h.callId}</code>)</span>`,
  ]}`;
}

function refusedHtml(a: ReportAgent): SafeHtml {
  const lines = a.refusals.map(
    (x) =>
      markup`<li>${[
        badge(x.kind.replace('_', ' '), 'bad'),
        x.tool !== null ? markup` <code>${x.tool}</code>` : '',
        x.path !== null ? markup` <code>${x.path}</code>` : '',
        x.by !== null ? markup` by <code>${x.by}</code>` : '',
        markup`: ${x.reason}`,
      ]}</li>`,
  );
  if (lines.length === 0) return markup`<span class="muted">nothing</span>`;
  return markup`<ul class="plain">${lines}</ul>`;
}

function outcomeHtml(a: ReportAgent): SafeHtml {
  const c = a.completion;
  return markup`${[
    badge(a.status, STATUS_TONE[a.status]),
    a.stopReason ? markup` <code>${a.stopReason}</code>` : '',
    a.decidedBy ? markup` decided by <code>${a.decidedBy}</code>` : '',
    c && c.filesChanged.length ? markup`; changed ${codeList(c.filesChanged)}` : '',
    c && c.withheld.length
      ? markup`; <span class="bad">withheld (outside its paths)</span> ${codeList(c.withheld)}`
      : '',
  ]}`;
}

function nodeHtml(a: ReportAgent, anchors: ReadonlyMap<string, string>): SafeHtml {
  const task = cut(a.task.replace(/\s+/g, ' '), 240);
  return markup`<li>
    <div class="node" data-run="${a.runId}">
      <div class="node-head">
        ${badge(a.status, STATUS_TONE[a.status])} ${agentLink(a, anchors)}
        <span class="muted small">depth ${a.depth} · ${count(a.actions)} calls · verify</span>
        ${badge(a.verify.verdict.replace('_', ' '), VERDICT_TONE[a.verify.verdict])}
      </div>
      <div class="task">${task.text}${task.cut ? '…' : ''}</div>
      <dl class="facts small">
        <dt>handed over</dt>
        <dd>${handoffHtml(a)}</dd>
        <dt>refused</dt>
        <dd>${refusedHtml(a)}</dd>
        <dt>outcome</dt>
        <dd>${outcomeHtml(a)}</dd>
        ${
          a.problems.length
            ? markup`<dt class="bad">problems</dt>
                <dd>
                  <ul class="plain">
                    ${a.problems.map((p) => markup`<li>${p}</li>`)}
                  </ul>
                </dd>`
            : ''
        }
      </dl>
    </div>
    ${
      a.children.length
        ? markup`<ul class="children">
            ${a.children.map((c) => nodeHtml(c, anchors))}
          </ul>`
        : ''
    }
  </li>`;
}

export function lineageHtml(root: ReportAgent, anchors: ReadonlyMap<string, string>): SafeHtml {
  return markup`<ul class="tree">
    ${nodeHtml(root, anchors)}
  </ul>`;
}

/** One agent: what it was given and how it ended, then every call it made. */
export function agentSectionHtml(a: ReportAgent, anchors: ReadonlyMap<string, string>): SafeHtml {
  const u = a.usage;
  return markup`<section class="agent" id="${anchors.get(a.runId) ?? ''}" data-run="${a.runId}">
    <h3>
      ${badge(a.status, STATUS_TONE[a.status])} <span class="mono">${a.runId}</span>
      <span class="muted small">depth ${a.depth}</span>
    </h3>
    <dl class="facts">
      <dt>task</dt>
      <dd>${foldedText(a.task, 'Task', 'task')}</dd>
      <dt>model</dt>
      <dd>${a.model !== null ? markup`<code>${a.model}</code>` : markup`<span class="muted">not recorded</span>`}</dd>
      <dt>handed over</dt>
      <dd>${handoffHtml(a)}</dd>
      <dt>outcome</dt>
      <dd>${outcomeHtml(a)}</dd>
      <dt>time</dt>
      <dd>${clock(a.startedAt)} → ${clock(a.lastEventAt)}</dd>
      <dt>tokens</dt>
      <dd>${count(u.inputTokens)} in, ${count(u.outputTokens)} out, cost ${money(u.costUsd)}</dd>
      <dt>refused</dt>
      <dd>${refusedHtml(a)}</dd>
      ${
        a.answer !== null
          ? markup`<dt>answer</dt>
              <dd>${foldedText(a.answer, 'Answer', 'answer')}</dd>`
          : ''
      }
    </dl>
    <h4>Timeline: ${count(a.calls.length)} calls</h4>
    ${timelineHtml(a.calls, anchors)}
  </section>`;
}
