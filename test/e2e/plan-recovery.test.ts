import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  cleanScratch,
  done,
  FAST_RECOVERY,
  fix,
  FIX_PLAN,
  flakyRepo,
  json,
  lastContext,
  of,
  plan,
  read,
  READS,
  submit,
  type Event,
} from '../support/plan-cli';

/**
 * Plan mode's recovery end to end (issue 15): a real sandbox, scripted models, a project config
 * with short backoffs. Every failure is classified (`failure.classified`) before its recipe is
 * applied (`recovery.applied`: recipe, attempt, outcome); a person is asked only where the recipe
 * says so, and never for a credential.
 */
afterEach(cleanScratch);

const FLAKY = ['bash(sh flaky.sh*)'];
const POLICY = { mode: 'confirm-novel', allow: ['submit_plan', ...READS, ...FLAKY] };
const config = () => ['--config', json('config.json', FAST_RECOVERY)];
const bash = (command: string, more: Record<string, unknown> = {}) => call('bash', { command, ...more });

/** The recovery events of a log, in order, as [type, class, outcome-or-attempt…]. */
function recoveryTrail(events: Event[]): unknown[][] {
  return events
    .filter((e) => ['failure.classified', 'recovery.applied', 'recovery.escalated'].includes(e.type))
    .map((e) =>
      e.type === 'failure.classified'
        ? [e.type, e.data.taskId, e.data.class]
        : e.type === 'recovery.applied'
          ? [e.type, e.data.taskId, e.data.recipe, e.data.attempt, e.data.maxAttempts, e.data.outcome]
          : [e.type, e.data.taskId, e.data.class, e.data.status],
    );
}
const indexOf = (events: Event[], type: string, match: (d: Record<string, unknown>) => boolean) =>
  events.findIndex((e) => e.type === type && match(e.data));

describe('gatehouse plan: recovery recipes (real sandbox, scripted model)', () => {
  it('transient: HTTP 503 or a refused connection in a check, and a timed-out call, are retried with backoff', () => {
    const tasks = [
      {
        id: 't1',
        title: 'Run flaky.sh once and check that the service answers',
        tools: ['bash'],
        check: "sh flaky.sh http 1 'HTTP/1.1 503 Service Unavailable'",
      },
      { id: 't2', title: 'Run flaky.sh slow with a timeout of one second', tools: ['bash'], dependsOn: ['t1'] },
      {
        id: 't3',
        title: 'Run flaky.sh once and check that the port accepts connections',
        tools: ['bash'],
        dependsOn: ['t2'],
        check: "sh flaky.sh port 1 'curl: (7) Failed to connect to localhost port 8080: Connection refused'",
      },
    ];
    const r = plan({
      dir: flakyRepo(),
      turns: [
        submit(tasks),
        bash('sh flaky.sh warm 0 x'),
        done('t1', 'flaky.sh printed ok (obs-2).'),
        done('t1', 'flaky.sh printed ok (obs-2).'), // after the backoff: the check passes
        bash('sh flaky.sh slow 1 sleep', { timeout: 1500 }),
        done('t2', 'flaky.sh slow printed ok (obs-8).'),
        bash('sh flaky.sh warm 0 x'),
        done('t3', 'flaky.sh printed ok (obs-10).'),
        done('t3', 'flaky.sh printed ok (obs-10).'),
      ],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(recoveryTrail(r.events)).toEqual([
      ['failure.classified', 't1', 'transient'],
      ['recovery.applied', 't1', 'retry_transient', 1, 2, 'retrying'],
      ['recovery.applied', 't1', 'retry_transient', 1, 2, 'succeeded'],
      ['failure.classified', 't2', 'transient'],
      ['recovery.applied', 't2', 'retry_transient', 1, 2, 'retrying'],
      ['recovery.applied', 't2', 'retry_transient', 1, 2, 'succeeded'],
      ['failure.classified', 't3', 'transient'],
      ['recovery.applied', 't3', 'retry_transient', 1, 2, 'retrying'],
      ['recovery.applied', 't3', 'retry_transient', 1, 2, 'succeeded'],
    ]);
    const classified = of(r.events, 'failure.classified');
    expect(classified[0]!.evidence).toMatch(/HTTP\/1\.1 503/);
    expect(classified[1]!.evidence).toMatch(/timeout/);
    expect(classified[2]!.evidence).toMatch(/Connection refused/i);
    // The config's backoff, in order, before each retry.
    expect(
      of(r.events, 'recovery.applied')
        .filter((d) => d.outcome === 'retrying')
        .map((d) => d.delayMs),
    ).toEqual([300, 300, 300]);
    // The timed-out call was run again by gatehouse itself, and the model was told its result.
    const retried = r.events.find((e) => e.type === 'tool.intent' && String(e.data.callId).endsWith('.retry1'));
    expect(retried).toMatchObject({ actor: 'runtime', data: { callId: 'call_4_0.retry1', taskId: 't2' } });
    expect(lastContext(r.events)).toMatch(/gatehouse ran it again \(retry 1 of 2, recipe retry_transient\)/);
    expect(of(r.events, 'recovery.escalated')).toEqual([]);
    expect(of(r.events, 'plan.completed')).toMatchObject([{ completed: ['t1', 't2', 't3'], failed: [] }]);
  });

  it('logic: a failing check is retried once with its output as feedback; the second attempt succeeds', () => {
    const r = plan({
      turns: [
        submit(FIX_PLAN),
        read,
        done('t1', 'add() in src/math.js subtracts (obs-2).'),
        read, // t2 "done" without the change: node --test fails
        done('t2', 'add() in src/math.js was read (obs-4).'),
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-7).'),
        bash('node --test'),
        done('t3', 'The tests pass (obs-10).'),
      ],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(recoveryTrail(r.events)).toEqual([
      ['failure.classified', 't2', 'logic'],
      ['recovery.applied', 't2', 'feedback_logic', 1, 1, 'retrying'],
      ['recovery.applied', 't2', 'feedback_logic', 1, 1, 'succeeded'],
    ]);
    expect(of(r.events, 'failure.classified')[0]).toMatchObject({ evidence: 'check `node --test` exited 1' });
    // The model was shown what failed: the check's own output.
    const t2Fix = r.events.findIndex(
      (e) =>
        e.type === 'model.output' &&
        e.data.toolCalls instanceof Array &&
        (e.data.toolCalls as { callId: string }[]).some((c) => c.callId === 'call_5_0'),
    );
    expect(lastContext(r.events.slice(0, t2Fix))).toMatch(
      /Task t2 did not succeed \(logic: check `node --test` exited 1\)/,
    );
    expect(of(r.events, 'task.completed').map((d) => d.taskId)).toEqual(['t1', 't2', 't3']);
  });

  it('invalid_input: a call refused by validation is fed back once; the corrected call completes the task', () => {
    const r = plan({
      turns: [
        submit(FIX_PLAN),
        read,
        done('t1', 'add() in src/math.js subtracts (obs-2).'),
        call('edit_file', { path: 'src/math.js', oldText: 'return a - b;' }), // no newText
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-5).'),
        bash('node --test'),
        done('t3', 'The tests pass (obs-8).'),
      ],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(recoveryTrail(r.events)).toEqual([
      ['failure.classified', 't2', 'invalid_input'],
      ['recovery.applied', 't2', 'feedback_invalid_input', 1, 1, 'retrying'],
      ['recovery.applied', 't2', 'feedback_invalid_input', 1, 1, 'succeeded'],
    ]);
    expect(of(r.events, 'failure.classified')[0]).toMatchObject({ callId: 'call_3_0' });
    expect(String(of(r.events, 'failure.classified')[0]!.evidence)).toMatch(/rejected at schema/);
  });

  for (const [name, cause] of [
    ['permission: a policy denial stops and asks a person, never for a credential', 'permission'],
    ['unknown: a check killed by a signal goes to a person at once', 'unknown'],
  ] as const) {
    it(name, () => {
      const tasks = [
        {
          id: 't1',
          title: cause === 'permission' ? 'Push the branch to origin with git push' : 'Run flaky.sh once and check it',
          tools: ['bash'],
          ...(cause === 'unknown' ? { check: 'kill -9 $$' } : {}),
        },
        ...FIX_PLAN.slice(1).map((t) => ({ ...t, dependsOn: [] })),
      ];
      const r = plan({
        dir: flakyRepo(),
        turns: [
          submit(tasks),
          cause === 'permission' ? bash('git push origin main') : bash('sh flaky.sh warm 0 x'),
          ...(cause === 'unknown' ? [done('t1', 'flaky.sh printed ok (obs-2).')] : []),
        ],
        policy: { ...POLICY, deny: ['bash(git push*)'], allow: [...POLICY.allow, 'bash(kill*)'] },
        extra: config(),
      });
      // Headless: the run pauses on the escalation (exit 3), nothing retried.
      expect(r.status, r.stderr).toBe(3);
      expect(recoveryTrail(r.events)).toEqual([
        ['failure.classified', 't1', cause],
        ['recovery.escalated', 't1', cause, 'requested'],
      ]);
      const classified = indexOf(r.events, 'failure.classified', () => true);
      const escalated = indexOf(r.events, 'recovery.escalated', () => true);
      expect(classified).toBeLessThan(escalated);
      if (cause === 'unknown') expect(of(r.events, 'failure.classified')[0]!.evidence).toMatch(/no exit code/);
      else expect(of(r.events, 'failure.classified')[0]!.evidence).toMatch(/outcome denied/);
      const request = of(r.events, 'approval.requested').find((d) => d.tool === 'escalation');
      expect(request).toMatchObject({ callId: 'esc_t1_1' });
      const input = request!.input as { failureClass: string; reason: string; choices: string[] };
      expect(input).toMatchObject({ failureClass: cause, choices: ['retry', 'skip', 'abort'] });
      // The answer is only a choice: nothing invites typing a secret.
      expect(input.reason).not.toMatch(
        /(enter|type|paste|provide|send|give)\s+(us\s+|me\s+)?(your|the|a)\s+(password|token|credential|secret|key)/i,
      );
      if (cause === 'permission') expect(input.reason).toMatch(/never takes a credential as text/);
      expect(of(r.events, 'task.started').map((d) => d.taskId)).toEqual(['t1']);
    });
  }
});
