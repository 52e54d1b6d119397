import type { AgentNode } from '../events/agent-node';
import { buildTree, walkTree } from '../events/lineage';
import { resolveRun } from '../events/run-ref';
import { oneLine } from '../approval/channels/screen';

/**
 * `gatehouse show RUN --tree [--json]`: the run and every sub-agent below it, rebuilt from their
 * logs: one block per agent, indented by depth. Exit 0, or 1 when any log disagrees with another
 * (the problems are printed).
 */
export function treeCommand(ref: string, stateDirFlag: string | undefined, json: boolean): number {
  const { stateDir, runId } = resolveRun(ref, { stateDir: stateDirFlag });
  const root = buildTree(stateDir, runId);
  const nodes = walkTree(root);
  const problems = nodes.reduce((n, x) => n + x.problems.length, 0);
  if (json) {
    process.stdout.write(`${JSON.stringify(root)}\n`);
  } else {
    // Task text, inputs and reasons come from models and files: control characters are shown as escapes.
    process.stdout.write(renderTree(root).split('\n').map(oneLine).join('\n'));
    process.stdout.write(
      problems === 0
        ? `${nodes.length} agent(s); the logs agree\n`
        : `${nodes.length} agent(s); ${problems} problem(s) in ${nodes.filter((x) => x.problems.length > 0).length} ` +
            `of them\n`,
    );
  }
  if (problems > 0) {
    for (const n of nodes) for (const p of n.problems) process.stderr.write(`gatehouse: ${n.runId}: ${oneLine(p)}\n`);
    return 1;
  }
  return 0;
}

/** The tree as text, one block per agent, children indented under their parent. */
export function renderTree(root: AgentNode): string {
  const out: string[] = [];
  const visit = (n: AgentNode, level: number) => {
    const pad = '  '.repeat(level);
    const line = (s: string) => out.push(`${pad}${s}`);
    line(
      `${level === 0 ? '●' : '└─'} ${n.runId}  ${n.status}${n.stopReason ? ` (${n.stopReason})` : ''}  depth ` +
        `${n.depth}`,
    );
    const inner = (s: string) => line(`   ${s}`);
    inner(`task: ${firstLine(n.task)}`);
    inner(`tools: ${n.tools.join(', ') || '(none)'}`);
    if (n.actions.length === 0) inner('actions: none');
    for (const a of n.actions)
      inner(
        `${a.callId}  ${a.tool} ${a.input} → ${a.outcome}; ` +
          `${a.authorisedBy.startsWith('none') ? `not run${a.authorisedBy.slice(4)}` : `allowed by ${a.authorisedBy}`}`,
      );
    for (const r of n.approvals)
      inner(
        `approval ${r.requestId} (${r.tool}): ` +
          `${r.status}${r.approver ? ` by ${r.approver}` : ''}${r.channel ? ` via ${r.channel}` : ''}`,
      );
    for (const p of n.problems) inner(`PROBLEM: ${p}`);
    for (const c of n.children) visit(c, level + 1);
  };
  visit(root, 0);
  return `${out.join('\n')}\n`;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
