import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '@gatehouse/shared';
import { StateTracker } from '../../src/events/state';
import { RunLog } from '../../src/events/store';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { tee } from '../../src/run/tee';
import { systemPrompt } from '../../src/context/system';
import { MemorySandbox, type ExecResponder } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { ALL_TOOLS, LIMITS, policyOf, scriptedChannel } from '../tools/pipeline-harness';

export const BUDGETS = { maxTurns: 10, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 600_000 };

/**
 * A run recorded as run/drive.ts records one, without Docker: run.started with the surface and
 * budgets, then the real loop (the system prompt and tools drive.ts gives it) over the real
 * pipeline and an in-memory sandbox, into a real log in a state directory.
 */
export async function recordRun(
  script: Script,
  files: Record<string, string>,
  exec: ExecResponder = () => ({ exitCode: 0, output: 'ok\n' }),
  repo?: string,
): Promise<{ stateDir: string; runId: string; outcome: LoopOutcome }> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-state-'));
  const runId = newId('run');
  const raw = RunLog.create(stateDir, runId);
  const tracker = new StateTracker();
  const log = tee(raw, tracker);
  const task = 'fix the greeting';
  log.append('run.started', 'user', {
    task,
    mode: 'sandboxed-auto',
    surface: ALL_TOOLS,
    model: 'scripted:recorded',
    ...(repo ? { repo } : {}),
    lineage: [runId],
    budgets: BUDGETS,
  });
  const registry = codingTools();
  const pipeline = new ToolPipeline({
    log,
    tracker,
    registry,
    surface: ALL_TOOLS,
    policy: policyOf({}),
    sandbox: new MemorySandbox({ files, exec }),
    limits: LIMITS,
    channel: scriptedChannel(),
  });
  try {
    const outcome = await runLoop({
      provider: new ScriptedProvider(script),
      log,
      tracker,
      pipeline,
      system: systemPrompt(BUDGETS),
      task,
      tools: registry.describe(ALL_TOOLS),
      budgets: BUDGETS,
      contextTokenBudget: 100_000,
      signal: new AbortController().signal,
    });
    if (outcome.status === 'paused') throw new Error('a recorded test run never waits for approvals');
    log.append('run.completed', 'runtime', { status: outcome.status, stopReason: outcome.stopReason });
    return { stateDir, runId, outcome };
  } finally {
    raw.close();
  }
}

export function scriptFile(script: Script): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-script-')), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}

/** Every file under a folder, .git included, by path: its mode and content hash. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else {
        const content = st.isSymbolicLink() ? '' : readFileSync(path.join(dir, r));
        out[r] = `${st.mode.toString(8)}:${createHash('sha256').update(content).digest('hex')}`;
      }
    }
  };
  walk('');
  return out;
}
