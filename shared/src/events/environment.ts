import { z } from 'zod';

/**
 * Events of a run's environment: the setup phase that prepares the sandbox before the model's first
 * turn (its commands, its cache), the preflight check of the programs the run needs, and every
 * decision of the egress proxy. Secrets given to setup never appear here: only their names.
 */
const Phase = z.enum(['setup', 'agent']);
const Output = z.string().max(64 * 1024);

export const EnvironmentEventData = {
  'setup.started': z.strictObject({
    /** The toolchain image as given (`preset:node`, an image reference), and the run image derived from it. */
    image: z.string(),
    runImage: z.string(),
    commands: z.array(z.string()),
    cacheKey: z.string(),
    /** Hosts setup may reach through the egress proxy. */
    egress: z.array(z.string()),
    /** Names of the variables passed to setup only (never their values). */
    secrets: z.array(z.string()),
  }),
  /** One setup command as it ended; `output` is its head and tail (redacted), `bytes` the whole size. */
  'setup.command': z.strictObject({
    index: z.number().int().nonnegative(),
    command: z.string(),
    status: z.string(),
    exitCode: z.number().int().nullable(),
    durationMs: z.number().nonnegative(),
    output: Output,
    bytes: z.number().int().nonnegative(),
    truncated: z.boolean(),
  }),
  'setup.completed': z.strictObject({
    cacheHit: z.boolean(),
    cacheKey: z.string(),
    /** The image the run's sandboxes start from (setup's results in its workspace), or the run image without setup. */
    image: z.string(),
    durationMs: z.number().nonnegative(),
    /** Workspace entries setup created that the cache keeps (a new directory counts once). */
    cachedPaths: z.number().int().nonnegative().optional(),
  }),
  /** Setup or preflight could not prepare the environment: the run ends before any model call (exit 5). */
  'setup.failed': z.strictObject({
    stage: z.enum(['image', 'preflight', 'command', 'cache']),
    reason: z.string(),
    command: z.string().optional(),
    exitCode: z.number().int().nullable().optional(),
  }),
  /** The programs `setup` and `check` name, looked up in the sandbox. */
  'preflight.completed': z.strictObject({
    programs: z.array(
      z.strictObject({
        program: z.string(),
        for: z.enum(['setup', 'check']),
        found: z.boolean(),
        path: z.string().optional(),
      }),
    ),
  }),
  'egress.allowed': z.strictObject({
    host: z.string(),
    port: z.number().int(),
    phase: Phase,
    address: z.string().optional(),
  }),
  'egress.denied': z.strictObject({
    host: z.string(),
    port: z.number().int(),
    phase: Phase,
    address: z.string().optional(),
    reason: z.string(),
  }),
} as const;
