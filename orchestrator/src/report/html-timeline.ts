import type { ReportCall } from './report-call-schema';
import { markup, type HtmlValue, type SafeHtml } from './html-escape';
import { badge, clock, foldedText } from './html-parts';

/**
 * One agent's calls as a timeline: each call's phases in order (intent → validation → decision and
 * who made it → approval → execution → observation), with the time each was recorded. Every
 * string from the call is the model's or the repository's and goes through `markup`.
 */

type CallState = 'ran' | 'stopped' | 'waiting';

function stateOf(c: ReportCall): CallState {
  if (c.validation?.ok === false || c.decision?.decision === 'deny' || c.approval?.status === 'denied')
    return 'stopped';
  if (c.observation?.outcome === 'denied' || c.observation?.outcome === 'rejected') return 'stopped';
  if (c.execution || c.childRunId) return 'ran';
  return 'waiting';
}

/** A bash call's command line; any other input as indented JSON. */
function inputText(input: unknown): string {
  if (input && typeof input === 'object' && typeof (input as { command?: unknown }).command === 'string')
    return (input as { command: string }).command;
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}

const STATE_TONE: Record<CallState, string> = { ran: 'ok', stopped: 'bad', waiting: 'warn' };
const DECISION_TONE = { allow: 'ok', ask: 'warn', deny: 'bad' } as const;
const APPROVAL_TONE = { granted: 'ok', pending: 'warn', denied: 'bad' } as const;
const OUTCOME_TONE: Record<string, string> = { ok: 'ok', failed: 'warn', rejected: 'bad', denied: 'bad' };

function phase(name: string, at: string | null, what: HtmlValue, tone = ''): SafeHtml {
  return markup`<li class="phase ${tone}" data-phase="${name}">
    <span class="name">${name}</span>
    <div class="what">${what}</div>
    <span class="when">${clock(at)}</span>
  </li>`;
}

function validationPhase(c: ReportCall): SafeHtml | null {
  const v = c.validation;
  if (!v) return null;
  if (v.ok)
    return phase('validation', v.at, markup`<span class="ok">valid</span> <span class="muted">(${v.stage})</span>`);
  return phase(
    'validation',
    v.at,
    markup`${badge('rejected', 'bad')} at stage <code>${v.stage}</code>: ${v.errors.join('; ') || 'no reason given'}`,
  );
}

function decisionPhase(c: ReportCall): SafeHtml | null {
  const d = c.decision;
  if (!d) return null;
  const risk = d.risk.length ? markup` <span class="muted small">risk: ${d.risk.join(', ')}</span>` : '';
  return phase(
    'decision',
    d.at,
    markup`${badge(d.decision, DECISION_TONE[d.decision])} by rule <code>${d.rule}</code>: ${d.reason}${risk}`,
  );
}

function approvalPhase(c: ReportCall): SafeHtml | null {
  const a = c.approval;
  if (!a) return null;
  const asked = markup`asked (request <code>${a.requestId}</code>, rule <code>${a.rule}</code>): ${a.reason}`;
  const answer =
    a.status === 'pending'
      ? markup`<br>${badge('pending', 'warn')} no answer yet`
      : markup`${[
          markup`<br>${badge(a.status, APPROVAL_TONE[a.status])}`,
          markup` by <strong>${a.approver ?? 'unknown'}</strong> via ${a.channel ?? 'unknown'}`,
          a.scope ? markup`, scope <code>${a.scope}</code>` : '',
          a.answeredAt ? markup` at ${clock(a.answeredAt)}` : '',
          a.answer ? markup`: ${a.answer}` : '',
        ]}`;
  return phase('approval', a.requestedAt, markup`${asked}${answer}`);
}

function executionPhase(c: ReportCall, childLink: SafeHtml | null): SafeHtml {
  const x = c.execution;
  if (!x && childLink) return phase('execution', null, markup`ran as a sub-agent${childLink}`);
  if (!x) return phase('execution', null, markup`<span class="muted">did not run</span>`);
  const clean = x.status === 'ok' && (x.exitCode ?? 0) === 0;
  const result =
    x.status === null
      ? badge('no result recorded', 'warn')
      : badge(x.exitCode !== null ? `exit ${x.exitCode}` : x.status, clean ? 'ok' : 'warn');
  const changed = x.filesChanged.map((f, i) => markup`${i ? ', ' : ''}<code>${f}</code>`);
  return phase('execution', x.startedAt, [
    markup`${result} <code>${x.primitive}</code> in the ${x.executor}`,
    x.durationMs !== null ? markup`, ${Math.round(x.durationMs)} ms` : '',
    x.signal ? markup`, signal ${x.signal}` : '',
    changed.length ? markup`; changed ${changed}` : '',
    x.error ? markup`<br><span class="bad">${x.error}</span>` : '',
    childLink,
  ]);
}

function observationPhase(c: ReportCall): SafeHtml {
  const o = c.observation;
  if (!o) return phase('observation', null, markup`<span class="muted">nothing shown to the model (yet)</span>`);
  const label = `${o.observationId} · ${o.outcome}${o.truncated ? ' · cut by the output limit' : ''}`;
  return phase('observation', o.at, [
    badge(o.outcome, OUTCOME_TONE[o.outcome] ?? 'neutral'),
    markup` <span class="mono small">${o.observationId}</span>`,
    o.truncated ? markup` <span class="muted small">(cut by the output limit)</span>` : '',
    foldedText(o.content, label, 'observation'),
  ]);
}

/** The phases of a call, and the link to the sub-agent a delegate call started (`anchors`: run id → element id). */
export function callHtml(c: ReportCall, anchors: ReadonlyMap<string, string>): SafeHtml {
  const state = stateOf(c);
  const anchor = c.childRunId ? anchors.get(c.childRunId) : undefined;
  const child = anchor
    ? markup`<a href="#${anchor}" class="mono">${c.childRunId}</a>`
    : markup`<code>${c.childRunId}</code>`;
  const childLink = c.childRunId ? markup`: ${child}` : null;
  const flow = [
    c.validation ? (c.validation.ok ? 'valid' : 'rejected') : null,
    c.decision ? c.decision.decision : null,
    c.approval ? c.approval.status : null,
    c.execution
      ? c.execution.exitCode !== null
        ? `exit ${c.execution.exitCode}`
        : (c.execution.status ?? 'started')
      : null,
    c.observation ? c.observation.outcome : null,
  ].filter((x) => x !== null);
  return markup`<li class="call ${state}" data-call="${c.callId}">
    <div class="call-head">
      <span class="muted small">turn ${c.turn}</span> <span class="tool mono">${c.tool}</span>
      <span class="mono small muted">${c.callId}</span
      >${c.actor !== 'model' ? markup` ${badge(`by ${c.actor}`, 'info')}` : ''}
      <span class="flow">${['proposed', ...flow].join(' → ')}</span>
    </div>
    <ol class="phases">
      ${phase(
        'intent',
        c.proposedAt,
        markup`proposed by <strong>${c.actor}</strong>
          <pre>${inputText(c.input)}</pre>`,
      )}
      ${validationPhase(c)} ${decisionPhase(c)} ${approvalPhase(c)}
      ${phase('authorised', null, markup`<span class="${STATE_TONE[state]}">${c.authorisedBy}</span>`)}
      ${executionPhase(c, childLink)} ${observationPhase(c)}
    </ol>
  </li>`;
}

export function timelineHtml(calls: readonly ReportCall[], anchors: ReadonlyMap<string, string>): SafeHtml {
  if (calls.length === 0) return markup`<p class="muted">No tool calls.</p>`;
  return markup`<ol class="timeline">
    ${calls.map((c) => callHtml(c, anchors))}
  </ol>`;
}
