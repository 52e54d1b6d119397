import type { EventEnvelope } from '@gatehouse/shared';
import { oneLine } from '../approval/channels/screen';
import { failureLines } from './failure-lines';
import { environmentLines } from './environment-progress';
import { RunningTotals } from './running-totals';

/** Short, single-line rendering of a tool's arguments for a person watching. */
function brief(input: unknown): string {
  if (input === null || typeof input !== 'object') return JSON.stringify(input)?.slice(0, 80) ?? '';
  const o = input as Record<string, unknown>;
  const main = o.command ?? o.path ?? o.pattern ?? o.ref;
  const text = typeof main === 'string' ? main : JSON.stringify(input);
  return oneLine(text.replace(/\s+/g, ' ')).slice(0, 100);
}

/**
 * Live progress for a person: one line per step, as the events are written. On a terminal, a
 * command running longer than a second gets a spinner with its elapsed time.
 */
export function humanProgress(
  out: (line: string) => void,
  tty = Boolean(process.stdout.isTTY),
): (e: EventEnvelope) => void {
  const calls = new Map<string, { tool: string; args: string }>();
  const totals = new RunningTotals();
  let spinner: NodeJS.Timeout | undefined;
  const stopSpinner = (): void => {
    if (!spinner) return;
    clearInterval(spinner);
    spinner = undefined;
    process.stdout.write('\r\u001b[2K');
  };
  return (e) => {
    if (e.type !== 'tool.execution.started') stopSpinner();
    // A sub-agent's events are indented under its run id; call ids repeat across runs.
    const child = e.parentRunId !== null;
    const write = (line: string): void => out(child ? `    │ ${e.runId.slice(-8)}  ${line.trimStart()}` : line);
    const tools = {
      get: (callId: string) => calls.get(`${e.runId}:${callId}`),
      set: (callId: string, v: { tool: string; args: string }) => calls.set(`${e.runId}:${callId}`, v),
    };
    for (const line of environmentLines(e) ?? []) write(line);
    switch (e.type) {
      case 'agent.spawned': {
        const d = e.data;
        if (e.runId === d.parentRunId)
          write(
            `  ⇢ sub-agent ${d.childRunId}: ${d.reason.replace(/\s+/g, ' ').slice(0, 80)} [tools ` +
              `${d.tools.join(', ')}; paths ${d.paths.join(', ')}]`,
          );
        break;
      }
      case 'agent.completed': {
        const d = e.data;
        if (e.runId === d.parentRunId)
          write(
            `  ⇠ sub-agent ${d.childRunId} ${d.status} ` +
              `(${d.stopReason})${d.filesChanged.length ? `, changed ${d.filesChanged.join(', ')}` : ''}`,
          );
        break;
      }
      case 'tool.execution.started': {
        const d = e.data;
        const t = tools.get(d.callId);
        if (!tty || child) break;
        const started = Date.now();
        const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
        let i = 0;
        spinner = setInterval(() => {
          const s = (Date.now() - started) / 1000;
          if (s >= 1)
            process.stdout.write(
              `\r\u001b[2K  ${frames[i++ % frames.length]} ${t?.tool ?? ''} ${t?.args ?? ''}  ${s.toFixed(0)} s`,
            );
        }, 100);
        spinner.unref();
        break;
      }
      case 'run.started': {
        const d = e.data;
        write(`▶ ${e.runId}  ${d.model ?? ''}  mode ${d.mode}\n  task: ${oneLine(d.task).slice(0, 300)}`);
        break;
      }
      case 'sandbox.started': {
        const d = e.data;
        write(`  sandbox ${d.sandboxId} ready in ${Math.round(d.timings.total ?? 0)} ms`);
        if (d.withheldCount) {
          const shown = (d.withheld ?? []).slice(0, 5).map(oneLine).join(', ');
          write(
            `  withheld (the policy denies reading them): ${d.withheldCount} path(s): ` +
              `${shown}${d.withheldCount > 5 ? ', …' : ''}`,
          );
        }
        if (d.freshRepository)
          write(
            `  git history withheld (${oneLine(d.freshRepositoryReason ?? 'it could hold withheld files')}): the ` +
              `sandbox has a fresh one-commit repository`,
          );
        if (d.protectedPaths)
          write(`  read-only to commands (the policy denies writing them): ${d.protectedPaths} path(s)`);
        break;
      }
      case 'model.output': {
        const d = e.data;
        const said = oneLine(d.text.trim().replace(/\s+/g, ' '));
        const used = totals.add(e.runId, d.usage);
        if (d.error) write(`turn ${d.turn}: model error (${d.error.kind}): ${oneLine(d.error.message)}  ${used}`);
        else
          write(
            `turn ${d.turn}: ` +
              `${said ? `“${said.slice(0, 160)}${said.length > 160 ? '…' : ''}”` : ''}` +
              `${d.toolCalls.length ? ` → ${d.toolCalls.length} tool call(s)` : ' (answer)'}  ${used}`,
          );
        break;
      }
      case 'tool.intent': {
        const d = e.data;
        tools.set(d.callId, { tool: d.tool, args: brief(d.input) });
        if (e.actor === 'runtime' && d.callId.startsWith('check_'))
          write(`  the model did not run the check after its last change: gatehouse runs it (${d.callId})`);
        break;
      }
      case 'tool.validation': {
        const d = e.data;
        const t = tools.get(d.callId);
        if (!d.ok) write(`  ✗ ${t?.tool} ${t?.args}  rejected (${d.stage}): ${oneLine(d.errors[0]?.message ?? '')}`);
        break;
      }
      case 'tool.approval': {
        const d = e.data;
        const t = tools.get(d.callId);
        if (d.decision !== 'allow')
          write(`  ✗ ${t?.tool} ${t?.args}  ${d.decision} (${oneLine(d.policyId)}): ${oneLine(d.reason)}`);
        break;
      }
      case 'tool.execution.completed': {
        const d = e.data;
        const t = tools.get(d.callId);
        // A command that ran and exited non-zero failed too (its output follows under the line).
        const mark = d.status === 'ok' && (d.exitCode ?? 0) === 0 ? '✓' : '✗';
        const exit = d.exitCode !== null ? `exit ${d.exitCode}, ` : '';
        write(`  ${mark} ${t?.tool} ${t?.args}  ${d.status} (${exit}${Math.round(d.durationMs)} ms)`);
        break;
      }
      case 'tool.observation': {
        // Why a step failed (`npm: command not found`), under its ✗ line; the rest is in the log.
        const d = e.data;
        if (d.outcome !== 'failed') break;
        const width = Math.min(160, (process.stdout.columns ?? 160) - (child ? 20 : 6));
        for (const line of failureLines(d.content, { max: 3, width })) write(`      │ ${line}`);
        break;
      }
      case 'run.feedback': {
        const d = e.data;
        // A failed check's feedback carries its output (shown above, under the ✗ line): its first line says why.
        const reason = d.kind === 'check' ? (d.reason.split('\n')[0] ?? '') : d.reason;
        write(`  ! answer sent back: ${oneLine(reason)}`);
        break;
      }
      case 'run.check': {
        const d = e.data;
        const by = d.ranBy === 'model' ? 'run by the model' : 'run by gatehouse';
        const cited = d.observationId ? `, ${d.observationId}` : '';
        write(
          d.passed
            ? `  ✓ check passed: ${brief({ command: d.command })} (${by}${cited})`
            : `  ✗ check did not pass: ${brief({ command: d.command })} (${by}${cited}): ${oneLine(d.reason ?? '')}`,
        );
        break;
      }
      case 'sandbox.lost': {
        const d = e.data;
        write(`  ! sandbox lost: ${d.reason}`);
        break;
      }
      case 'run.resumed': {
        // A person's resume is their own command; gatehouse's (a lost sandbox replaced) is news.
        if (e.actor === 'runtime')
          write(`  ↻ continued in a fresh sandbox, workspace from the ${e.data.workspaceFrom}`);
        break;
      }
      default:
        break;
    }
  };
}
