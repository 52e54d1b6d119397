import type { EventEnvelope } from '@gatehouse/shared';
import { oneLine } from '../approval/channels/screen';

/**
 * Plan mode's progress for a person, one line per plan event (stderr, so --json's stdout stays
 * events only): the plan and its gate, each task as it starts and ends (`[Task 2/5] ✓ title: result`,
 * ✗ failed, skipped), and the summary at the end. Undefined for every other event.
 */
export function planProgressLine(e: EventEnvelope): string | undefined {
  if (e.parentRunId !== null) return undefined;
  switch (e.type) {
    case 'plan.created':
      return `plan v${e.data.version}: ${e.data.tasks.length} tasks (${e.data.tasks.map((t) => t.id).join(', ')})`;
    case 'plan.gate': {
      const d = e.data;
      const by = d.by ? ` by ${oneLine(d.by)}` : '';
      if (d.status === 'requested') return `plan: waiting for approval (${d.requestId ?? ''})`;
      if (d.status === 'approved' || d.status === 'modified')
        return `plan ${d.status}${by}: ${(d.tasks ?? []).map((t) => t.id).join(' → ')}`;
      return `plan ${d.status}${by}: ${oneLine(d.reason ?? '').slice(0, 200)}`;
    }
    case 'task.started': {
      const again = e.data.attempt > 1 ? ` (attempt ${e.data.attempt})` : '';
      return `[Task ${e.data.index}/${e.data.total}] … ${oneLine(e.data.title)}${again}`;
    }
    case 'task.completed': {
      const d = e.data;
      return `[Task ${d.index}/${d.total}] ✓ ${oneLine(d.title)}: ${oneLine(d.result).slice(0, 200)}`;
    }
    case 'task.failed': {
      const d = e.data;
      return `[Task ${d.index}/${d.total}] ✗ ${oneLine(d.title)}: ${oneLine(d.error).slice(0, 200)}`;
    }
    case 'recovery.escalated':
      return e.data.status === 'decided'
        ? `task ${e.data.taskId}: ${e.data.decision ?? ''}${e.data.by ? ` (${oneLine(e.data.by)})` : ''}`
        : `task ${e.data.taskId}: escalated (${e.data.class}): ${oneLine(e.data.reason).slice(0, 200)}`;
    case 'plan.completed':
      return `${e.data.skipped.map((id) => `skipped: ${id}\n`).join('')}${e.data.summary}`;
    default:
      return undefined;
  }
}
