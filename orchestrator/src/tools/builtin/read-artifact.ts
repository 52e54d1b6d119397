import { z } from 'zod';
import { defineTool } from '../tool';

const PAGE = 16 * 1024;

export const readArtifact = defineTool({
  name: 'read_artifact',
  description:
    'Page through a stored full output (an artifact named in a truncated observation). offset and limit are in bytes.',
  input: z.strictObject({
    ref: z
      .string()
      .regex(/^art-[0-9a-f]{16}$/, 'an artifact ref looks like art-0123456789abcdef')
      .describe('artifact ref from an observation'),
    offset: z.number().int().nonnegative().optional(),
    limit: z
      .number()
      .int()
      .positive()
      .max(64 * 1024)
      .optional(),
  }),
  sideEffect: 'read',
  isReadOnly: () => true,
  plan: (input, ctx) => ({
    executor: 'orchestrator',
    primitive: 'read_artifact',
    input,
    timeoutMs: 5_000,
    run: async (io) => {
      try {
        // A page must fit what the model is shown, or it would be cut again (into a new artifact).
        const fits = Math.max(1024, ctx.limits.observationBudget - 1024);
        const page = io.readArtifact(input.ref, input.offset ?? 0, Math.min(input.limit ?? PAGE, PAGE, fits));
        const next = page.eof
          ? 'end of artifact'
          : `next: read_artifact {"ref": "${input.ref}", "offset": ${page.offset + page.bytes}}`;
        return {
          ok: true,
          output:
            `${input.ref} bytes ${page.offset}-${page.offset + page.bytes} of ${page.totalBytes} ` +
            `(${next})\n${page.text}`,
        };
      } catch (e) {
        return { ok: false, output: '', error: { code: 'artifact_unavailable', message: (e as Error).message } };
      }
    },
  }),
  observe(_input, raw) {
    if (raw.executor !== 'orchestrator') throw new Error('read_artifact runs in the orchestrator');
    const r = raw.result;
    return r.ok
      ? { ok: true, text: r.output, external: true }
      : { ok: false, text: `error (${r.error?.code}): ${r.error?.message}`, external: false };
  },
});
