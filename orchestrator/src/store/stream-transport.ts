import { type JetStreamClient, type JetStreamManager, type StoredMsg } from 'nats';
import type { ReplicaTransport, StoredEvent } from './event-replica';
import { retryThroughFailover } from './failover-retry';

const decoder = new TextDecoder();

export function storedEvent(m: StoredMsg): StoredEvent {
  return { seq: m.seq, msgId: m.header?.get('Nats-Msg-Id') || null, data: decoder.decode(m.data) };
}

const notFound = (e: unknown): boolean => /no message found|not found/i.test((e as Error).message);

/** The replica's view of one stream (nats.js). */
export function streamTransport(js: JetStreamClient, jsm: JetStreamManager, stream: string): ReplicaTransport {
  return {
    async publish(subject, line, o) {
      const ack = await js.publish(subject, line, {
        msgID: o.msgID,
        expect: { lastSubjectSequence: o.expectLast },
        timeout: 5000,
      });
      return { seq: ack.seq, duplicate: ack.duplicate };
    },
    async lastOnSubject(subject) {
      try {
        return storedEvent(await jsm.streams.getMessage(stream, { last_by_subj: subject }));
      } catch (e) {
        if (notFound(e)) return undefined;
        throw e;
      }
    },
    async messageAt(seq) {
      return storedEvent(await jsm.streams.getMessage(stream, { seq }));
    },
  };
}

/**
 * Every message of one subject, in stream order, read by sequence (`next_by_subj`): nats-server 2.9
 * hung on filtered consumer and stream-info calls, and a run's subject is read once per materialize.
 */
export async function* subjectMessages(jsm: JetStreamManager, stream: string, subject: string) {
  let seq = 1;
  for (;;) {
    let m: StoredMsg;
    try {
      // `next_by_subj` is a message-get request field the server has understood since 2.9.
      // A read changes nothing: tried again (bounded) while the stream's leader is being re-elected.
      m = await retryThroughFailover(() =>
        jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as unknown as { seq: number }),
      );
    } catch (e) {
      if (notFound(e)) return;
      throw e;
    }
    yield storedEvent(m);
    seq = m.seq + 1;
  }
}
