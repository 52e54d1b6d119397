import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainRun, RunLog, verifyLog, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, startDriver } from '../support/sandbox';
import { pipelineFor } from '../support/pipeline';

/** "Why did the agent change that file?" answered from the log on disk, not from memory. */
describe('the log alone tells the whole story of every action', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_audit',
      repoDir: makeRepo({ 'src/a.ts': 'export const a = 1;\n' }),
    });
  });
  afterAll(async () => driver?.close());

  it(
    'answers who proposed, what was validated, ' + 'which rule allowed, what ran, what came back, what was shown',
    async () => {
      const h = pipelineFor(sandbox);
      await h.call('read_file', { path: 'src/a.ts' });
      await h.call('edit_file', { path: 'src/a.ts', oldText: 'a = 1', newText: 'a = 2' });
      await h.call('bash', { command: 'grep -c "a = 2" src/a.ts; exit 1', timeout: 5000 });
      await h.call('write_file', { path: 'src/a.ts', content: 'x', mode: '0777' });
      h.log.sync();

      // Read back from disk, as an auditor would, after checking the chain.
      const verified = verifyLog(h.log.file);
      expect(verified.ok).toBe(true);
      const events = RunLog.readEvents(h.log.runDir.split('/runs/')[0]!, h.log.runId);
      const story = explainRun(events);
      expect(story.map((a) => a.proposed.tool)).toEqual(['read_file', 'edit_file', 'bash', 'write_file']);

      const edit = story[1]!;
      expect(edit.proposed.input).toEqual({ path: 'src/a.ts', oldText: 'a = 1', newText: 'a = 2' });
      expect(edit.validation).toMatchObject({ ok: true });
      expect(edit.approval).toMatchObject({ decision: 'allow', policyId: 'mode:sandboxed-auto' });
      expect(edit.executed).toMatchObject({
        primitive: 'edit_file',
        input: { path: 'src/a.ts', expectedSha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
      });
      expect(edit.result).toMatchObject({ status: 'ok', filesChanged: ['src/a.ts'] });
      expect(edit.shown.content).toContain('edited src/a.ts');

      const bash = story[2]!;
      expect(bash.executed).toMatchObject({
        primitive: 'exec',
        timeoutMs: 5000,
        input: { command: 'grep -c "a = 2" src/a.ts; exit 1', cwd: '.' },
      });
      expect(bash.result).toMatchObject({ status: 'failed', exitCode: 1, truncated: false });
      expect(bash.result!.bytes).toBeGreaterThan(0);
      expect(bash.shown.content).toContain('exit code 1');

      const rejected = story[3]!;
      expect(rejected.validation).toMatchObject({
        ok: false,
        stage: 'schema',
        errors: [{ code: 'unrecognized_keys' }],
      });
      expect(rejected.approval).toBeUndefined();
      expect(rejected.executed).toBeUndefined();
      expect(rejected.shown.outcome).toBe('rejected');

      // Causation links every stage back to the model's intent.
      const ids = new Map(events.map((e) => [e.id, e]));
      const observation = events.find(
        (e) => e.type === 'tool.observation' && (e.data as { callId: string }).callId === bash.callId,
      )!;
      const chain: string[] = [];
      for (
        let e: (typeof events)[number] | undefined = observation;
        e;
        e = e.causationId ? ids.get(e.causationId) : undefined
      )
        chain.unshift(e.type);
      expect(chain).toEqual([
        'tool.intent',
        'tool.validation',
        'tool.approval',
        'tool.execution.started',
        'tool.execution.completed',
        'tool.observation',
      ]);
      expect(observation.actor).toBe('runtime');
      expect(events.find((e) => e.id === edit.proposed.eventId)!.actor).toBe('model');
    },
  );
});
