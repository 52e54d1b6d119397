import { checkHandoff, Handoff } from '../../agents/handoff';
import { defineTool, semanticError } from '../tool';

/**
 * Hands a subtask to a sub-agent: its own sandbox (a copy of this workspace), its own log, only
 * the tools, paths, evidence and budget given here, and this agent's policy narrowed to them.
 * What it changed comes back through this agent's own write path and policy.
 */
export const delegate = defineTool({
  name: 'delegate',
  description:
    'Hand a subtask to a sub-agent that works in its own sandbox on a copy of this workspace. ' +
    'Give it the task, the tools it may use (a subset of yours), the workspace paths it may change (globs), ' +
    'evidence (observation ids) it needs, a budget within what you have left, and the answer you expect. ' +
    'Its final answer comes back as the observation; ' +
    'its file changes inside its paths are applied to your workspace through your own write path. ' +
    'Several delegate calls in one turn run in parallel.',
  input: Handoff,
  sideEffect: 'delegate',
  isReadOnly: () => false,
  validate(input, ctx) {
    if (!ctx.agent)
      return Promise.resolve([semanticError('', 'delegation_unavailable', 'sub-agents are not available in this run')]);
    return Promise.resolve(checkHandoff(input, ctx.agent()));
  },
  plan: (input) => ({
    executor: 'orchestrator',
    primitive: 'delegate',
    input,
    timeoutMs: Math.ceil(input.budget.seconds * 1000),
    run: async (io) =>
      io.delegate
        ? io.delegate(input)
        : {
            ok: false,
            output: '',
            error: { code: 'delegation_unavailable', message: 'sub-agents are not available in this run' },
          },
  }),
  observe(_input, raw) {
    if (raw.executor !== 'orchestrator') return { ok: false, text: 'unexpected result for delegate', external: false };
    const r = raw.result;
    // The sub-agent's answer is model output: shown as data, not as instructions.
    return {
      ok: r.ok,
      text: r.ok ? r.output : `${r.error ? `error (${r.error.code}): ${r.error.message}\n` : ''}${r.output}`,
      external: true,
    };
  },
});
