import { z } from 'zod';
import { MemoryCitation, MEMORY_SCOPES } from '../../memory/memory-record';
import { MIN_QUOTE_CHARS } from '../../memory/verify-citations';
import { defineTool, semanticError } from '../tool';

/**
 * The model PROPOSES a memory record; it is stored only if every citation is an observation of this
 * run that holds its quote verbatim (memory/verify-citations.ts, checked at validation and again
 * when it is stored) and the gate lets it through (asked by default in every mode,
 * policy/memory-tools.ts). Nothing else writes memory: no tool, no observation, no model text.
 */
export const remember = defineTool({
  name: 'remember',
  description:
    'Propose a fact for memory across runs (a person approves it). Cite observations of THIS run that show it: ' +
    `each citation is an observation id and a quote of at least ${MIN_QUOTE_CHARS} characters copied verbatim ` +
    'from inside its data block. Only durable, verified facts (the test command, a convention), never guesses.',
  input: z.strictObject({
    text: z.string().trim().min(1).max(1000).describe('the fact, one or two sentences'),
    scope: z.enum(MEMORY_SCOPES).describe('repository: about this repository; user: about how this user works'),
    confidence: z.enum(['low', 'medium', 'high']),
    expiresInDays: z.number().int().min(1).max(365).optional().describe('default 90'),
    citations: z.array(MemoryCitation).min(1).max(8),
  }),
  sideEffect: 'write',
  isReadOnly: () => false,
  validate(input, ctx) {
    if (!ctx.memory)
      return Promise.resolve([semanticError('', 'memory_off', 'memory is off for this run (gatehouse run --memory)')]);
    return Promise.resolve(ctx.memory.check(input.citations));
  },
  plan: (input) => ({
    executor: 'orchestrator',
    primitive: 'remember',
    input,
    timeoutMs: 10_000,
    run: (io) => {
      if (!io.remember)
        return Promise.resolve({
          ok: false,
          output: '',
          error: { code: 'memory_off', message: 'memory is off for this run' },
        });
      return Promise.resolve(io.remember({ ...input, expiresInDays: input.expiresInDays ?? 90 }));
    },
  }),
  observe(_input, raw) {
    if (raw.executor !== 'orchestrator') return { ok: false, text: 'unexpected result for remember', external: false };
    const r = raw.result;
    return r.ok
      ? { ok: true, text: r.output, external: false }
      : { ok: false, text: `not stored (${r.error?.code}): ${r.error?.message}`, external: false };
  },
});
