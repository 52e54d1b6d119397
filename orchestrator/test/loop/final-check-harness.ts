import { afterEach } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import type { ApprovalChannel } from '../../src/approval/channels/types';
import { StateTracker } from '../../src/events/state';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import type { ApprovalPolicy } from '../../src/policy/approval-policy';
import type { ModelProvider } from '../../src/providers/types';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { tee } from '../../src/run/tee';
import { MemorySandbox, TestLog } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { ALL_TOOLS, LIMITS, policyOf } from '../tools/pipeline-harness';

/**
 * The check that decides success, over the real loop, pipeline, policy and log, with the scripted
 * model and the in-memory sandbox: `npm test` passes once src/add.js exists and adds.
 */
export const CHECK = 'npm test';
export const BROKEN = 'export const add = (a, b) => a - b;\n';
export const FIXED = 'export const add = (a, b) => a + b;\n';
const BUDGETS = { maxTurns: 20, maxToolCalls: 20, maxTokens: 1_000_000, wallClockMs: 600_000 };
const ALLOW_ALL = policyOf({ mode: 'sandboxed-auto' });

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

export interface World {
  log: TestLog;
  sandbox: MemorySandbox;
  commands: string[];
}

export function world(): World {
  const log = new TestLog();
  logs.push(log);
  log.append('run.started', 'user', { task: 'fix add', mode: 'sandboxed-auto', surface: ALL_TOOLS });
  const commands: string[] = [];
  const sandbox = new MemorySandbox({
    // src/add.js is the run's to write (an existing file would have to be read first).
    files: { 'package.json': '{"scripts":{"test":"node --test"}}' },
    exec: ({ command, workspace }) => {
      commands.push(command);
      const passes = workspace.files.get('src/add.js')?.includes('a + b') ?? false;
      const tests = passes ? '# pass 1\n# fail 0\n' : 'not ok 1 - add\n  expected 3, got -1\n# pass 0\n# fail 1\n';
      if (command.trim().replace(/\s+/g, ' ') === CHECK) return { exitCode: passes ? 0 : 1, output: tests };
      if (command === 'npm test || true') return { exitCode: 0, output: tests };
      if (command === 'cat src/add.js') return { exitCode: 0, output: workspace.files.get('src/add.js') ?? '' };
      return { exitCode: 127, output: `${command}: not scripted\n` };
    },
  });
  return { log, sandbox, commands };
}

/** One stretch of a run as drive.ts runs it: state from the log, a fresh model and pipeline, the loop. */
export function stretch(
  w: World,
  script: Script | ModelProvider,
  o: { policy?: ApprovalPolicy; channel?: ApprovalChannel; resume?: boolean; check?: string | null } = {},
): Promise<LoopOutcome> {
  const tracker = new StateTracker(w.log.events());
  const teed = tee(w.log.log, tracker);
  const provider = 'turns' in script ? new ScriptedProvider(script) : script;
  provider.resumeAfter?.(tracker.state.turns);
  const registry = codingTools();
  const pipeline = new ToolPipeline({
    log: teed,
    tracker,
    registry,
    surface: ALL_TOOLS,
    policy: o.policy ?? ALLOW_ALL,
    sandbox: w.sandbox,
    limits: LIMITS,
    ...(o.channel ? { channel: o.channel } : {}),
  });
  const check = o.check === undefined ? CHECK : o.check;
  return runLoop({
    provider,
    log: teed,
    tracker,
    pipeline,
    system: 'test',
    task: 'fix add',
    tools: registry.describe(ALL_TOOLS),
    budgets: BUDGETS,
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
    ...(o.resume ? { resume: true } : {}),
    ...(check !== null ? { check: { command: check } } : {}),
  });
}

export const fix = { toolCalls: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED } }] };
export const breakIt = { toolCalls: [{ name: 'write_file', input: { path: 'src/add.js', content: BROKEN } }] };
export const bash = (command: string) => ({ toolCalls: [{ name: 'bash', input: { command } }] });
export const final = (text = 'Fixed add() in src/add.js (obs-1).') => ({ final: text });

export const ofType = <T extends EventEnvelope['type']>(w: World, type: T) =>
  w.log.events().filter((e) => e.type === type) as Array<Extract<EventEnvelope, { type: T }>>;
export const checks = (w: World) => ofType(w, 'run.check').map((e) => e.data);
export const feedback = (w: World) => ofType(w, 'run.feedback').map((e) => e.data);
