import path from 'node:path';
import { createDelegator } from '../agents/delegation';
import type { AgentScope } from '../agents/handoff';
import { pendingRequests } from '../approval/state';
import { exportChanges, type ExportResult } from '../loop/changes';
import { Checkpointer, gateInvocations } from '../loop/checkpoint';
import { recoveryRecipes } from '../plan/recovery-recipes';
import { runLoop, type LoopOutcome } from '../loop/loop';
import type { Sandbox } from '../sandbox/index';
import { ToolPipeline, type CallResult, type PipelineDeps, type ToolCall } from '../tools/pipeline';
import { planRunParts } from '../plan/plan-loop';
import { taskAgentScope } from '../plan/task-agent-scope';
import { approvedScope } from '../plan/approved-scope';
import type { ToolLimits } from '../tools/tool';
import { activeWallMs, runUsage } from '../events/state';
import { addUsage, childrenUsage } from '../usage/tree-usage';
import { withMcpTools } from '../mcp/run-mcp-tools';
import { preflightRun, prepareRunEnvironment, sandboxOptionsFor, type ReadyEnvironment } from './environment';
import { runSystemPrompt } from './run-system-prompt';
import { memoryPort } from '../memory/memory-port';
import { RunFencedError } from '../store/store-errors';
import { afterSandboxLoss } from './sandbox-replacement';
import { recordSandboxStarted } from './sandbox-started';
import { SETUP_FAILED, type AgentRunResult, type ResumeRun, type RunEnvironment, type RunHandle } from './types';

export const DEFAULT_LIMITS: ToolLimits = {
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  observationBudget: 16_000,
  maxReadLines: 2000,
};

/**
 * Runs the loop in a fresh sandbox and ends the run's log: `run.completed` when it is over, or
 * `run.paused` (with the workspace saved beside the log) when it waits for approvals. Sub-agents
 * are resumed with `resume`, passed in by the caller (resume.ts itself drives).
 */
export async function drive(o: RunEnvironment, resume: ResumeRun, h: RunHandle): Promise<AgentRunResult> {
  const { raw, log, tracker } = h;
  const runId = raw.runId;
  // A parent's totals and budgets count its sub-agents' usage too (usage/tree-usage.ts).
  const finishedChildren = new Map<string, ReturnType<typeof childrenUsage>>();
  const children = () => childrenUsage(o.stateDir, runId, log.events(), finishedChildren);
  const end = (outcome: LoopOutcome, extra: Partial<AgentRunResult> = {}): AgentRunResult => {
    const result: AgentRunResult = {
      ...outcome,
      runId,
      runDir: raw.runDir,
      repoDir: h.repoDir,
      filesChanged: [],
      applied: false,
      pendingRequests: [],
      ...extra,
    };
    if (outcome.status !== 'paused') {
      result.usage = runUsage(addUsage({ ...tracker.state.usage }, children()));
      log.append('run.completed', 'runtime', {
        status: outcome.status,
        stopReason: result.stopReason,
        ...(result.answer !== undefined ? { answer: result.answer } : {}),
        filesChanged: result.filesChanged,
        applied: result.applied,
        ...(result.diffFile ? { diffFile: result.diffFile.slice(raw.runDir.length + 1) } : {}),
        ...(result.refused?.length ? { refused: result.refused } : {}),
        ...(result.skipped?.length ? { skipped: result.skipped } : {}),
        ...(result.applyError ? { applyError: result.applyError } : {}),
        ...(result.decidedBy ? { decidedBy: result.decidedBy } : {}),
        usage: result.usage,
      });
    }
    raw.sync();
    raw.close();
    return result;
  };

  o.attachLog?.(log);
  // Ctrl-C while the environment is prepared stops setup part way: that is a cancelled run (exit 130),
  // not a setup that failed (exit 5), whatever error the interrupted step threw.
  const failedUnlessCancelled = (stopReason: string): LoopOutcome =>
    o.signal.aborted ? { status: 'cancelled', stopReason: 'cancelled' } : { status: 'failed', stopReason };
  // The environment first (image, setup, its cache): a run whose setup fails ends here, before any
  // model call. Sub-agents get their root's; every sandbox of the tree starts from it.
  let prepared: ReadyEnvironment | undefined;
  const inherited = o.prepared !== undefined;
  try {
    const env = await prepareRunEnvironment(o, h, stateDirIgnore(h.repoDir, o.stateDir));
    if (env?.kind === 'failed') return end(failedUnlessCancelled(`${SETUP_FAILED}: ${env.reason}`));
    prepared = env;
  } catch (e) {
    return end(failedUnlessCancelled(`${SETUP_FAILED}: ${(e as Error).message}`));
  }
  if (prepared && !o.prepared) o = { ...o, prepared };
  let sandbox: Sandbox;
  try {
    sandbox = await o.driver.createSandbox({
      runId,
      repoDir: h.repoDir,
      stateDir: path.resolve(o.stateDir),
      ...stateDirIgnore(h.repoDir, o.stateDir),
      ...(o.policy.paths ? { pathRules: o.policy.paths } : {}),
      ...sandboxOptionsFor(o, prepared, log),
    });
  } catch (e) {
    return end(failedUnlessCancelled(`sandbox_failed: ${(e as Error).message}`));
  }
  if (!h.resume && !inherited) {
    const preflight = await preflightRun(o, sandbox, log).catch((e: Error) => ({
      ok: false as const,
      reason: e.message,
    }));
    if (!preflight.ok) {
      await sandbox.destroy().catch(() => undefined);
      return end(failedUnlessCancelled(`${SETUP_FAILED}: ${preflight.reason}`));
    }
  }
  const lost = new AbortController();
  const signal = AbortSignal.any([o.signal, lost.signal]);
  try {
    const maxFileBytes = o.maxFileBytes ?? envMaxFileBytes();
    const checkpoints = new Checkpointer({
      sandbox,
      runDir: raw.runDir,
      log,
      registry: h.registry,
      ...(maxFileBytes ? { maxFileBytes } : {}),
      ...(raw.replica ? { replica: raw.replica } : {}),
    });
    if (h.prepare) {
      await h.prepare(sandbox);
      // The restored workspace is on record at once: a second crash resumes from here.
      await checkpoints.take();
    }
    const gated = gateInvocations(sandbox, checkpoints);
    const plog: typeof log = {
      ...log,
      // The flush before a change: the checkpoint in progress lands first (its flush releases what the
      // store was held from), and after it the store is held until this call's own checkpoint.
      flush: async () => {
        await checkpoints.idle();
        await log.flush?.();
        checkpoints.afterWriteAhead();
      },
      append: (type, actor, data, opts) => {
        const e = log.append(type, actor, data, opts);
        checkpoints.observe(e);
        return e;
      },
    };
    recordSandboxStarted(log, sandbox, prepared?.image ?? o.driver.images.sandbox);
    sandbox.onLost((e) => {
      log.append('sandbox.lost', 'sandbox', { sandboxId: sandbox.sandboxId, reason: e.reason });
      lost.abort();
    });
    const limits = { ...DEFAULT_LIMITS, ...o.limits };
    // MCP servers' tools join once the sandbox they run in is up (mcp/run-mcp-tools.ts).
    const surface = await withMcpTools({
      servers: o.projectConfig?.mcp,
      egress: o.projectConfig?.egress ?? { agent: [], deny: [] },
      mode: o.policy.mode,
      depth: o.agent?.depth ?? 0,
      registry: h.registry,
      surface: h.surface,
      sandbox: gated,
      log: plog,
      // Resumed: the tools the model was shown, checked against what the servers offer now.
      ...(h.resume ? { resumedFrom: log.events() } : {}),
    });
    const first = log.events()[0];
    const lineage = (first?.type === 'run.started' ? first.data.lineage : undefined) ?? [runId];
    const agent = o.agent ?? { depth: 0, maxDepth: 2, paths: ['**'], maxParallel: 4 };
    const scope = (): AgentScope => {
      const st = tracker.state;
      const maxCost = o.budgets.maxCostUsd;
      // Budgets handed to children are spent from this agent's budget when handed, used or not:
      // a tree can never use more than its root was given.
      const handed = { turns: 0, toolCalls: 0, tokens: 0 };
      for (const e of log.events()) {
        if (e.type !== 'agent.spawned') continue;
        const d = e.data;
        if (d.parentRunId !== runId) continue;
        handed.turns += d.budget.turns;
        handed.toolCalls += d.budget.toolCalls;
        handed.tokens += d.budget.tokens;
      }
      return {
        runId,
        lineage,
        depth: agent.depth,
        maxDepth: agent.maxDepth,
        ...taskAgentScope(st.plan, { surface, paths: agent.paths }),
        observations: new Set(st.observations.map((x) => x.id)),
        remaining: {
          turns: o.budgets.maxTurns - st.turns - handed.turns,
          toolCalls: o.budgets.maxToolCalls - st.toolCalls - handed.toolCalls,
          tokens: o.budgets.maxTokens - st.tokens - handed.tokens,
          seconds: (o.budgets.wallClockMs - activeWallMs(st)) / 1000,
          // Cost is not reserved when handed (a child is given all that is left): what the tree spent counts.
          ...(maxCost !== undefined ? { costUsd: maxCost - st.usage.costUsd - children().costUsd } : {}),
        },
      };
    };
    // eslint-disable-next-line prefer-const -- the delegator needs the pipeline it is part of
    let pipeline: ToolPipeline;
    // The delegator's own calls (applying a child's files) may be asked again after a resume: one
    // already on record is continued or reported, never started twice.
    const runOrContinue = async (call: ToolCall): Promise<CallResult> => {
      const known = tracker.state.approvals.calls[call.callId];
      if (!known) return pipeline.run(call, signal);
      if (known.observed) {
        const seen = tracker.state.observations.find((x) => x.callId === call.callId);
        // Both are folded from the call's one `tool.observation`, which is never recorded pending.
        if (!seen || seen.outcome === 'pending')
          throw new Error(`call ${call.callId} is marked observed but has no observation on record`);
        return {
          kind: 'observed',
          observation: {
            id: seen.id,
            callId: call.callId,
            tool: known.tool,
            outcome: seen.outcome,
            content: '',
            truncated: false,
          },
        };
      }
      return (await pipeline.continueCall(call.callId, signal)) ?? pipeline.run(call, signal);
    };
    const delegator = createDelegator({
      env: o,
      runId,
      lineage,
      depth: agent.depth,
      maxDepth: agent.maxDepth,
      maxParallel: agent.maxParallel,
      repoDir: h.repoDir,
      runDir: raw.runDir,
      log: plog,
      sandbox: gated,
      run: (call) => runOrContinue(call),
      drive: (env, handle) => drive(env, resume, handle),
      resume,
      scope,
    });
    // Plan mode (`gatehouse plan`): the same loop and pipeline, with the plan's scope and hooks (plan/plan-loop.ts).
    const planParts = tracker.state.plan.planMode
      ? planRunParts({ tracker, registry: h.registry, surface, resume: h.resume })
      : undefined;
    const pipelineDeps: PipelineDeps = {
      log: plog,
      tracker,
      registry: h.registry,
      surface,
      policy: o.policy,
      sandbox: gated,
      limits,
      lineage,
      agent: scope,
      delegate: (h, callId, sig) => delegator.run(h, callId, sig),
      resumeDelegate: (callId, sig) => delegator.resume(callId, sig),
      ...(o.channel ? { channel: o.channel } : {}),
      ...(planParts ? { planScope: planParts.planScope } : {}),
      ...(o.memory && h.surface.includes('remember') ? { memory: memoryPort(o.memory, plog, runId) } : {}),
    };
    pipeline = new ToolPipeline(pipelineDeps);
    o.provider.resumeAfter?.(tracker.state.turns);
    // The root's check decides the root run; a sub-agent's answer is judged by its parent (docs/runs.md).
    const check = agent.depth === 0 ? o.projectConfig?.check : undefined;
    const outcome = await runLoop({
      provider: o.provider,
      log: plog,
      tracker,
      pipeline,
      system: planParts ? planParts.system(runSystemPrompt(o.budgets)) : runSystemPrompt(o.budgets, check),
      task: h.task,
      tools: h.registry.describe(surface),
      budgets: o.budgets,
      ...(o.price ? { price: o.price } : {}),
      childUsage: () => {
        const c = children();
        return { tokens: c.inputTokens + c.outputTokens, costUsd: c.costUsd };
      },
      contextTokenBudget: o.contextTokenBudget ?? 100_000,
      signal,
      resume: h.resume,
      ...(o.onText ? { onText: o.onText } : {}),
      // A plan run is decided by its tasks and their checks, not by the run's check.
      ...(check && !planParts ? { check: { command: check, timeoutMs: limits.maxTimeoutMs } } : {}),
      ...(planParts
        ? {
            controller: planParts.controller({
              log: plog,
              tracker,
              pipeline,
              recovery: {
                log: plog,
                tracker,
                pipeline,
                ...(o.channel ? { channel: o.channel } : {}),
                lineage,
                recipes: recoveryRecipes(o.projectConfig?.recovery),
              },
              checkTimeoutMs: limits.maxTimeoutMs,
            }),
          }
        : {}),
    });
    await checkpoints.idle();
    if (sandbox.lost) {
      const stopReason = `sandbox_lost: ${sandbox.lost.reason}`;
      const next = await afterSandboxLoss({
        events: log.events(),
        runDir: raw.runDir,
        stateDir: o.stateDir,
        registry: h.registry,
        depth: agent.depth,
        cancelled: o.signal.aborted,
      });
      if (!next.replace) return end({ status: 'failed', stopReason: `${stopReason} (not continued: ${next.why})` });
      // The caller continues the run in a fresh sandbox (resume), after the store has this log's every event.
      await raw.flush();
      raw.close();
      // Already flushed: only a takeover (fenced) matters here; anything else the next log's flush meets again.
      await raw.closed().catch((e: unknown) => {
        if (e instanceof RunFencedError) throw e;
      });
      const { runDir } = raw;
      const unended = { runId, runDir, repoDir: h.repoDir, filesChanged: [], applied: false, pendingRequests: [] };
      return { status: 'failed', stopReason, ...unended, continueInFreshSandbox: true };
    }
    if (h.finish) await h.finish(sandbox, outcome);
    if (outcome.status === 'paused') {
      const saved = (await checkpoints.take()).manifest;
      const workspace = { dir: null, files: saved.files.map((f) => f.path), deleted: saved.deleted };
      const pending = pendingRequests(tracker.state.approvals);
      // A sub-agent's pending request is this run's too: the tree waits for it.
      log.append('run.paused', 'runtime', {
        pending: [
          ...new Set([...pending.map((r) => r.requestId), ...(outcome.pending ?? []).filter((id) => id !== 'unknown')]),
        ],
        workspace,
      });
      return end(outcome, { pendingRequests: pending, filesChanged: [...workspace.files, ...workspace.deleted] });
    }
    // Exporting is after the outcome: whatever goes wrong here is reported, never turns an
    // accepted answer into a failed run, and loses none of the other changes.
    const protect = insideRepo(h.repoDir, o.stateDir);
    const planScope = approvedScope(log.events());
    const changes = await exportChanges(sandbox, raw.runDir, h.repoDir, o.apply && outcome.status === 'final', {
      policy: o.policy,
      ...(checkpoints.previous ? { previous: checkpoints.previous } : {}),
      ...(maxFileBytes ? { maxFileBytes } : {}),
      ...(protect ? { protect: [protect] } : {}),
      ...(planScope ? { scope: planScope } : {}),
    }).catch((e: Error): ExportResult => ({
      filesChanged: [],
      applied: false,
      refused: [],
      skipped: [],
      applyError: `exporting the changes failed: ${e.message}`,
    }));
    const { saved: _saved, ...result } = changes;
    return end(outcome, result);
  } catch (e) {
    // Another writer took the run over (store/): this process records no end for it and stops.
    if (e instanceof RunFencedError) {
      raw.close();
      throw e;
    }
    return end({ status: 'failed', stopReason: `internal_error: ${(e as Error).message}` });
  } finally {
    await sandbox.destroy().catch(() => undefined);
  }
}

/** When runs are kept inside the repository (`--repo .`), earlier runs' logs stay out of the sandbox. */
function stateDirIgnore(repoDir: string, stateDir: string): { ignore?: (rel: string) => boolean } {
  const rel = insideRepo(repoDir, stateDir);
  return rel ? { ignore: (p: string) => p === rel || p.startsWith(`${rel}/`) } : {};
}

/** The state directory relative to the repository, when it is inside it. */
function insideRepo(repoDir: string, stateDir: string): string | undefined {
  const rel = path.relative(repoDir, stateDir);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : undefined;
}

function envMaxFileBytes(): number | undefined {
  const raw = process.env.GATEHOUSE_MAX_FILE_BYTES;
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`GATEHOUSE_MAX_FILE_BYTES must be a whole number of bytes, not ${JSON.stringify(raw)}`);
  return n;
}
