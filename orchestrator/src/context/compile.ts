import type { EventEnvelope } from '@gatehouse/shared';
import type { ModelMessage, ModelRequest, ModelToolSpec } from '../providers/types';
import { recoveryMessage } from '../plan/recovery-message';
import { planMessage } from './plan-messages';

export interface CompiledContext {
  request: Omit<ModelRequest, 'signal'>;
  estimatedTokens: number;
  /** Observations replaced by references this turn. */
  compacted: string[];
}

export interface CompileOptions {
  system: string;
  task: string;
  tools: ModelToolSpec[];
  /** Estimated tokens the context may take. */
  tokenBudget: number;
  /** The most recent observations are never compacted. */
  keepRecent?: number;
}

/** A rough, stable estimate: about four characters per token. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * What the model sees this turn, projected from the run's events: the task (with what memory
 * recalled for it, from `memory.recalled`), each turn's proposals and the observations they
 * produced, and any feedback. Over the budget, the oldest observations
 * are replaced by a marked reference; the log keeps them whole.
 */
export function compileContext(events: readonly EventEnvelope[], o: CompileOptions): CompiledContext {
  const messages: ModelMessage[] = [{ role: 'user', content: o.task }];
  // Only the model's own calls get a tool result: a provider refuses one that answers no call of the
  // model's. Gatehouse's own calls (its run of the check, a parent applying a sub-agent's files as
  // `<callId>.write1`) reach the model another way: the check's feedback, the delegate's observation.
  const modelCalls = new Set<string>();
  // Plan events (plan mode) are told as user messages before the model's next turn, never between
  // one turn's tool results (providers want those together).
  let planNotes: string[] = [];
  const flushPlanNotes = (): void => {
    if (planNotes.length) messages.push({ role: 'user', content: planNotes.join('\n\n') });
    planNotes = [];
  };
  for (const e of events) {
    // Remembered records (memory/recall.ts) join the task's message: marked as remembered, not observed.
    if (e.type === 'memory.recalled' && e.data.content !== '' && messages[0]?.role === 'user') {
      messages[0] = { role: 'user', content: `${messages[0].content}\n\n${e.data.content}` };
      continue;
    }
    const note = planMessage(e) ?? recoveryMessage(e, events);
    if (note !== undefined) {
      planNotes.push(note);
      continue;
    }
    if (e.type === 'model.output') {
      const d = e.data;
      if (d.error) continue;
      flushPlanNotes();
      for (const c of d.toolCalls) modelCalls.add(c.callId);
      messages.push({
        role: 'assistant',
        text: d.text,
        toolCalls: d.toolCalls.map((c) => ({ id: c.callId, name: c.name, input: c.input })),
      });
    } else if (e.type === 'tool.observation' && modelCalls.has(e.data.callId)) {
      const d = e.data;
      messages.push({
        role: 'tool',
        callId: d.callId,
        toolName: d.tool,
        content: d.content,
        isError: d.outcome !== 'ok',
      });
    } else if (e.type === 'run.feedback') {
      const d = e.data;
      flushPlanNotes();
      messages.push({
        role: 'user',
        // A reply that did not end gets a note that is itself the message (loop/truncated-feedback.ts).
        content:
          d.kind === 'truncated' || d.kind === 'filtered'
            ? d.reason
            : `Your answer was not accepted: ${d.reason}\nContinue the task, or answer again with citations.`,
      });
    }
  }
  flushPlanNotes();

  const fixed = estimateTokens(o.system) + estimateTokens(JSON.stringify(o.tools));
  let total =
    fixed +
    messages.reduce(
      (n, m) => n + estimateTokens(m.role === 'assistant' ? m.text + JSON.stringify(m.toolCalls) : m.content),
      0,
    );
  const compacted: string[] = [];
  const toolIdx = messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const compactable = toolIdx.slice(0, Math.max(0, toolIdx.length - (o.keepRecent ?? 4)));
  for (const i of compactable) {
    if (total <= o.tokenBudget) break;
    const m = messages[i] as Extract<ModelMessage, { role: 'tool' }>;
    const id = /\[(obs-\d+)\]/.exec(m.content)?.[1] ?? m.callId;
    const outcome = m.isError ? 'not ok' : 'ok';
    const reference =
      `[${id} compacted to save context: ${m.toolName} → ${outcome}. The full observation is in the ` +
      `run log; repeat the call if you need it again.]`;
    total -= estimateTokens(m.content) - estimateTokens(reference);
    messages[i] = { ...m, content: reference };
    compacted.push(id);
  }
  return { request: { system: o.system, messages, tools: o.tools }, estimatedTokens: total, compacted };
}
