import { planPreviewOf } from '../approval/channels/plan-preview';
import { oneLine, visible } from '../approval/channels/screen';
import type { RequestState } from '../approval/state';

/**
 * What a paused run prints about what it waits for, and the commands that answer it: a plan is
 * shown task by task (what the approver approves is what runs) with `gatehouse plan approve|reject|ask`,
 * an escalation with `gatehouse plan decide`, any other request with `gatehouse approve|deny`.
 */
export function pausedLines(runId: string, pending: ReadonlyArray<{ runId: string; request: RequestState }>): string[] {
  const lines = [`paused: waiting for approval (${pending.length} request${pending.length === 1 ? '' : 's'})`];
  const tools = new Set<string>();
  for (const { runId: owner, request: p } of pending) {
    tools.add(p.tool);
    const preview = planPreviewOf(p.tool, p.input);
    const where = owner !== runId ? `  (sub-agent ${owner})` : '';
    if (preview) {
      lines.push(`  ${p.requestId}  ${p.tool}${where}`);
      for (const l of visible(preview).split('\n')) lines.push(`      ${l}`);
    } else
      lines.push(
        `  ${p.requestId}  ${p.tool} ${oneLine(JSON.stringify(p.input)).slice(0, 100)}${where}  ` +
          `(full request: gatehouse approvals ${runId})`,
      );
    lines.push(`      rule: ${oneLine(p.rule)}; ${oneLine(p.reason)}`);
  }
  const plan = pending.find((p) => p.request.tool === 'submit_plan')?.request.requestId;
  if (plan)
    lines.push(
      `approve:  gatehouse plan approve ${runId} --request ${plan} [--skip ID] [--order ID,ID,…] [--edit 'ID=title']`,
      `          (or: gatehouse plan reject ${runId} --request ${plan} --reason …`,
      `           or: gatehouse plan ask ${runId} --request ${plan} --question …)`,
    );
  if (tools.has('escalation')) lines.push(`decide:   gatehouse plan decide ${runId} REQUEST retry|skip|abort`);
  if ([...tools].some((t) => t !== 'submit_plan' && t !== 'escalation'))
    lines.push(
      `approve:  gatehouse approve ${runId} REQUEST [--scope run]   (or: gatehouse deny ${runId} REQUEST --reason …)`,
    );
  lines.push(`then:     gatehouse resume ${runId}`);
  return lines;
}
