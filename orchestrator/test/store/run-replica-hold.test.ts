import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import type { KV } from 'nats';
import { LogKey } from '../../src/events/key';
import { Checkpointer } from '../../src/loop/checkpoint';
import type { Sandbox } from '../../src/sandbox/index';
import { EventReplica, type ReplicaTransport } from '../../src/store/index';
import type { RunFiles } from '../../src/store/run-files';
import { RunReplica } from '../../src/store/run-replica';
import type { ToolRegistry } from '../../src/tools/registry';

/**
 * The store is held from a changing call's write-ahead flush to its checkpoint's flush, so it never
 * has a change without the checkpoint that saved it (the JetStream side: test/e2e/store-takeover-checkpoint).
 */
class Subject implements ReplicaTransport {
  lines: string[] = [];
  publish(_s: string, line: string) {
    this.lines.push(line);
    return Promise.resolve({ seq: this.lines.length, duplicate: false });
  }
  lastOnSubject() {
    const n = this.lines.length;
    return Promise.resolve(n ? { seq: n, msgId: '', data: this.lines[n - 1]! } : undefined);
  }
  messageAt(seq: number) {
    return Promise.resolve({ seq, msgId: '', data: this.lines[seq - 1]! });
  }
}

function replica() {
  const subject = new Subject();
  const files = { upload: () => Promise.resolve() } as unknown as RunFiles;
  const heads = { put: () => Promise.resolve(1) } as unknown as KV;
  const events = new EventReplica('run_hold', 'subj', subject, { lastStreamSeq: 0 });
  return {
    subject,
    r: new RunReplica(
      events,
      files,
      heads,
      LogKey.fromBytes(randomBytes(32), { keyFile: '/nonexistent/log.key', headsDir: '/nonexistent' }),
      'stream',
    ),
  };
}

describe('RunReplica.hold', () => {
  it('keeps what is appended from the store until release, in order', async () => {
    const { subject, r } = replica();
    r.append(0, 'e0');
    r.hold();
    r.append(1, 'e1');
    r.append(2, 'e2');
    await r.events.flush();
    expect(subject.lines).toEqual(['e0']);
    r.release();
    await r.events.flush();
    expect(subject.lines).toEqual(['e0', 'e1', 'e2']);
  });

  it('a flush hands on what was held first: it is where the store must have everything', async () => {
    const { subject, r } = replica();
    r.hold();
    r.append(0, 'e0');
    await r.flush({ runDir: '/nonexistent', head: undefined });
    expect(subject.lines).toEqual(['e0']);
    r.append(1, 'e1');
    await r.flush({ runDir: '/nonexistent', head: undefined });
    expect(subject.lines).toEqual(['e0', 'e1']);
  });
});

describe('Checkpointer and the store hold', () => {
  const registry = {
    get: (name: string) => ({ name, sideEffect: 'write', isReadOnly: () => name === 'read_file' }),
  } as unknown as ToolRegistry;
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) => ({ type, seq: seq++, data }) as EventEnvelope;
  const calls: string[] = [];
  const failing = { container: undefined } as unknown as Sandbox;
  const checkpointer = () =>
    new Checkpointer({
      sandbox: failing,
      runDir: '/nonexistent',
      log: { append: () => undefined, sync: () => undefined, events: () => [] } as never,
      registry,
      replica: { hold: () => calls.push('hold'), release: () => calls.push('release') },
    });
  const started = (c: Checkpointer, callId: string, tool: string) => {
    c.observe(event('tool.intent', { callId, tool }));
    c.observe(event('tool.validation', { callId, ok: true, input: {} }));
    c.observe(event('tool.execution.started', { callId }));
  };

  it('holds after the write-ahead of a call that can change the workspace, not of a read', () => {
    calls.length = 0;
    const c = checkpointer();
    started(c, 'c1', 'read_file');
    c.afterWriteAhead();
    expect(calls).toEqual([]);
    started(c, 'c2', 'write_file');
    c.afterWriteAhead();
    // Once per start: a second flush before the next start holds nothing more.
    c.afterWriteAhead();
    expect(calls).toEqual(['hold']);
  });

  it('releases when the sandbox refused the call (nothing to save) or the checkpoint failed', async () => {
    calls.length = 0;
    const c = checkpointer();
    started(c, 'c3', 'write_file');
    c.afterWriteAhead();
    c.observe(event('tool.execution.completed', { callId: 'c3', status: 'rejected' }));
    expect(calls).toEqual(['hold', 'release']);
    started(c, 'c4', 'write_file');
    c.afterWriteAhead();
    c.observe(event('tool.execution.completed', { callId: 'c4', status: 'ok' }));
    await c.idle();
    expect(c.failure).toBeDefined();
    expect(calls).toEqual(['hold', 'release', 'hold', 'release']);
  });
});
