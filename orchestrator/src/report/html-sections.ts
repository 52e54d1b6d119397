import type { RunReport } from './report-schema';
import type { ReportAgent } from './report-agent-schema';
import { markup, SafeHtml } from './html-escape';
import { badge, clock, codeList, count, money } from './html-parts';
import { agentLink, VERDICT_TONE } from './html-tree';

/** The HTML report's sections about the whole tree: approvals, changes, tokens and cost, verify. */

const APPROVAL_TONE = { granted: 'ok', pending: 'warn', denied: 'bad' } as const;

export function approvalsHtml(agents: readonly ReportAgent[], anchors: ReadonlyMap<string, string>): SafeHtml {
  const rows = agents.flatMap((a) =>
    a.calls
      .filter((c) => c.approval !== null)
      .map((c) => {
        const x = c.approval!;
        return markup`<tr>
          <td>${agentLink(a, anchors)}</td>
          <td>
            <code>${c.tool}</code> <span class="mono small muted">${c.callId}</span><br /><span class="small"
              >rule <code>${x.rule}</code></span
            >
          </td>
          <td>${badge(x.status, APPROVAL_TONE[x.status])}</td>
          <td>${x.approver ?? ''}${x.channel ? markup` <span class="muted">via ${x.channel}</span>` : ''}</td>
          <td>${x.scope ?? ''}</td>
          <td>${clock(x.requestedAt)}</td>
          <td>${clock(x.answeredAt)}</td>
          <td>${x.answer ?? ''}</td>
        </tr>`;
      }),
  );
  if (rows.length === 0) return markup`<p class="muted">No approval was asked for.</p>`;
  return markup`<table class="approvals">
    <thead>
      <tr>
        <th>agent</th>
        <th>call</th>
        <th>answer</th>
        <th>who</th>
        <th>scope</th>
        <th>asked</th>
        <th>answered</th>
        <th>reason</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

/** Folded when longer than this many lines; shorter diffs are shown open. */
const DIFF_OPEN_LINES = 60;

/** The diff's lines, each marked as added, removed or a hunk header, one per line of the <pre>. */
function diffLines(diff: string): { html: SafeHtml; lines: number } {
  const lines = diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      const kind = line.startsWith('@@')
        ? 'hunk'
        : line.startsWith('+') && !line.startsWith('+++')
          ? 'add'
          : line.startsWith('-') && !line.startsWith('---')
            ? 'del'
            : '';
      return kind ? markup`<span class="${kind}">${line}</span>` : markup`${line}`;
    })
    .map((line) => line.value);
  return { html: new SafeHtml(lines.join('\n')), lines: lines.length };
}

export function changesHtml(r: RunReport): SafeHtml {
  const ch = r.changes;
  if (ch.files === null)
    return markup`<p class="muted">The run has not finished: its changes are not exported yet.</p>`;
  const applied = ch.applied ? 'Applied to the repository' : 'Not applied to the repository';
  const files = ch.files.length === 0 ? 'No files changed.' : markup`${applied}: ${codeList(ch.files)}`;
  const head = markup`<p>${files}</p>`;
  if (ch.diffError !== null)
    return markup`${head}
      <p class="bad">The diff could not be read: ${ch.diffError}</p>`;
  if (ch.diff === null) return head;
  const diff = diffLines(ch.diff);
  const where = `runs/${r.run.runId}/${ch.diffFile ?? ''}`;
  const note = ch.diffTruncated
    ? markup`<p class="muted small">
        The diff is cut at ${count(ch.diff.length)} characters of ${count(ch.diffBytes ?? 0)} bytes; the whole diff is
        <code>${where}</code> in gatehouse's state directory.
      </p>`
    : '';
  const open = diff.lines <= DIFF_OPEN_LINES;
  return markup`${head}
    <details class="diff"${open ? markup` open` : ''}>
      <summary>Diff: ${count(diff.lines)}${ch.diffTruncated ? '+' : ''} lines</summary>
      <pre class="diff">${diff.html}</pre>
      ${note}
    </details>`;
}

/** The cost of the whole tree; a lower bound when some agent's cost is unknown (no price for its model). */
export function treeCost(agents: readonly ReportAgent[]): string {
  const priced = agents.filter((a) => a.usage.costUsd !== null);
  const cost = priced.reduce((n, a) => n + (a.usage.costUsd ?? 0), 0);
  if (priced.length === agents.length) return money(cost);
  if (priced.length === 0) return 'unknown';
  return `at least ${money(cost)} (unknown for ${agents.length - priced.length} agent(s))`;
}

export function usageHtml(
  r: RunReport,
  agents: readonly ReportAgent[],
  anchors: ReadonlyMap<string, string>,
): SafeHtml {
  let input = 0;
  let output = 0;
  const rows = agents.map((a) => {
    const u = a.usage;
    input += u.inputTokens;
    output += u.outputTokens;
    return markup`<tr>
      <td>${agentLink(a, anchors)}</td>
      <td class="num">${count(u.inputTokens)}</td>
      <td class="num">${count(u.outputTokens)}</td>
      <td class="num">${u.cachedInputTokens === null ? '–' : count(u.cachedInputTokens)}</td>
      <td class="num">${money(u.costUsd)}</td>
      <td class="small muted">${u.source === 'run' ? 'run.completed' : 'summed from turns'}</td>
    </tr>`;
  });
  const b = r.usage.budgets;
  const budget = b
    ? markup`<p class="small">
        The root's budgets: ${b.maxTokens !== null ? `${count(b.maxTokens)} tokens` : 'no token limit'},
        ${b.maxCostUsd !== null ? `$${b.maxCostUsd}` : 'no cost limit'}.
      </p>`
    : '';
  return markup`<table class="usage">
      <thead>
        <tr>
          <th>agent</th>
          <th class="num">input tokens</th>
          <th class="num">output tokens</th>
          <th class="num">cached input</th>
          <th class="num">cost</th>
          <th>from</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
        <tr>
          <th>whole tree</th>
          <th class="num">${count(input)}</th>
          <th class="num">${count(output)}</th>
          <th></th>
          <th class="num">${treeCost(agents)}</th>
          <th></th>
        </tr>
      </tbody>
    </table>
    ${budget}`;
}

export function verifyHtml(agents: readonly ReportAgent[], anchors: ReadonlyMap<string, string>): SafeHtml {
  const rows = agents.map((a) => {
    const v = a.verify;
    const bad = v.firstBad
      ? markup`<p class="bad small">line ${v.firstBad.line}: ${v.firstBad.reason}<br />${v.firstBad.meaning}</p>`
      : '';
    const notes = [...v.problems.filter((p) => p !== v.firstBad?.reason), ...v.unanchored];
    return markup`<tr>
      <td>${agentLink(a, anchors)}</td>
      <td>${badge(v.verdict.replace('_', ' '), VERDICT_TONE[v.verdict])}</td>
      <td class="num">${count(v.events)}</td>
      <td>
        ${bad}${
          notes.length
            ? markup`<ul class="plain small">
                ${notes.map((n) => markup`<li>${n}</li>`)}
              </ul>`
            : ''
        }${
          v.checks.length
            ? markup`<details>
                <summary>checked</summary>
                <ul class="plain small mono">
                  ${v.checks.map((c) => markup`<li>${c}</li>`)}
                </ul>
              </details>`
            : ''
        }
      </td>
    </tr>`;
  });
  return markup`<table class="verify">
    <thead>
      <tr>
        <th>agent</th>
        <th>verdict</th>
        <th class="num">events</th>
        <th>what verify found</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
