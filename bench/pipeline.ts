import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256Hex, type EventEnvelope, type InvocationResult } from '@gatehouse/shared';
import {
  codingTools,
  fold,
  modePolicy,
  resolveSurface,
  RunLog,
  StateTracker,
  ToolPipeline,
  type Sandbox,
} from '@gatehouse/orchestrator';
import type { SandboxPort } from '../orchestrator/src/tools/ports';
import { summarize, time } from './stats';

// The gate the bench runs through: no rules, sandboxed-auto (the parser loads once).
const AUTO = await modePolicy('sandboxed-auto');
const LIMITS = { defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000, observationBudget: 30_000, maxReadLines: 2000 };
const CONTENT = 'export const x = 1;\n'.repeat(40);

function pipelineOver(sandbox: SandboxPort, stateDir: string, runId: string): ToolPipeline {
  const log = RunLog.create(stateDir, runId);
  const registry = codingTools();
  const surface = resolveSurface(registry, { mode: 'sandboxed-auto' });
  const tracker = new StateTracker();
  tracker.apply(log.append('run.started', 'user', { task: 'bench', mode: 'sandboxed-auto', surface }));
  return new ToolPipeline({ log, tracker, registry, surface, policy: AUTO, sandbox, limits: LIMITS });
}

/** A sandbox that answers at once: what is left is the pipeline's own cost. */
function instantSandbox(): SandboxPort {
  const sha256 = sha256Hex(CONTENT);
  const result: InvocationResult = {
    v: 1,
    invocationId: 'inv_x',
    runId: 'run_x',
    sandboxId: 'sbx_bench',
    primitive: 'read_file',
    status: 'ok',
    exitCode: null,
    signal: null,
    output: CONTENT,
    bytes: CONTENT.length,
    truncated: false,
    durationMs: 0.1,
    filesChanged: [],
    replayed: false,
    data: { kind: 'read_file', sha256, totalBytes: CONTENT.length, totalLines: 40, startLine: 1, endLine: 40 },
  };
  // `resolve` (the path stage of validation) answers that each path leads to itself.
  const resolved = (paths: string[]): InvocationResult => ({
    ...result,
    primitive: 'resolve',
    output: '',
    bytes: 0,
    data: { kind: 'resolve', paths: paths.map((p) => ({ path: p, real: p, exists: true, outside: false })) },
  });
  return {
    sandboxId: 'sbx_bench',
    invoke: async (primitive, input) =>
      primitive === 'resolve' ? resolved((input as { paths: string[] }).paths) : result,
  };
}

/** 100,000 events shaped like a real run's (intent, validation, approval, started, completed, observation). */
async function syntheticEvents(n: number): Promise<EventEnvelope[]> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-fold-'));
  const log = RunLog.create(stateDir, 'run_fold');
  log.append('run.started', 'user', { task: 'fold', mode: 'sandboxed-auto', surface: ['read_file'] });
  for (let i = 0; log.events().length < n; i++) {
    // Yield now and then: a live sandbox's heartbeats must still be read while this runs.
    if (i % 2000 === 0) await new Promise((r) => setImmediate(r));
    const callId = `c${i}`;
    log.append('tool.intent', 'model', { callId, turn: i, tool: 'read_file', input: { path: `f${i % 50}.ts` } });
    log.append('tool.validation', 'runtime', { callId, ok: true, stage: 'semantic', errors: [] });
    log.append('tool.approval', 'policy', {
      callId,
      decision: 'allow',
      policyId: 'p',
      reason: 'r',
      actionHash: 'a'.repeat(64),
    });
    log.append('tool.execution.started', 'runtime', {
      callId,
      invocationId: `i${i}`,
      executor: 'sandbox',
      primitive: 'read_file',
      input: {},
      timeoutMs: 1,
      approvalId: 'x',
    });
    log.append('tool.execution.completed', 'sandbox', {
      callId,
      invocationId: `i${i}`,
      status: 'ok',
      exitCode: 0,
      signal: null,
      durationMs: 1,
      bytes: 10,
      truncated: false,
      filesChanged: i % 7 === 0 ? [`f${i % 50}.ts`] : [],
      artifactRefs: [],
      fileHashes: { [`f${i % 50}.ts`]: 'b'.repeat(64) },
    });
    log.append('tool.observation', 'runtime', {
      callId,
      observationId: `obs-${i + 1}`,
      tool: 'read_file',
      outcome: 'ok',
      content: 'x'.repeat(200),
      truncated: false,
    });
  }
  const events = [...log.events()].slice(0, n);
  rmSync(stateDir, { recursive: true, force: true });
  return events;
}

export async function benchPipeline(sandbox: Sandbox): Promise<Record<string, unknown>> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-pipeline-'));
  try {
    const overhead = pipelineOver(instantSandbox(), stateDir, 'run_overhead');
    let n = 0;
    const call = (p: ToolPipeline) =>
      p.run({ callId: `c${++n}`, turn: 1, tool: 'read_file', input: { path: 'src/x.ts' } });
    await time(500, () => call(overhead));
    const pipelineOnly = summarize(await time(5000, () => call(overhead)));

    const w = { path: 'src/x.ts', content: CONTENT };
    await sandbox.invoke('write_file', w, {
      approval: (await import('@gatehouse/orchestrator')).runtimeApproval('write_file', w, 'bench'),
    });
    const real = pipelineOver(sandbox, stateDir, 'run_e2e');
    await time(50, () => call(real));
    const endToEnd = summarize(await time(500, () => call(real)));

    const events = await syntheticEvents(100_000);
    const foldMs = summarize(await time(5, async () => fold(events)));
    return {
      pipelineOverheadMs: {
        ...pipelineOnly,
        what: 'read_file through every stage and 6 event appends, sandbox answering instantly',
        target: 'p50 <= 0.2',
      },
      readFileEndToEndMs: {
        ...endToEnd,
        what: 'read_file through the pipeline and a real sandbox',
        target: 'p50 <= 2',
      },
      fold100kEventsMs: { ...foldMs, target: '<= 1000' },
    };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
