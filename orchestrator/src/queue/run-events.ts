import type { NatsConnection } from 'nats';
import { runSubject, storeNames } from '../store/names';

/**
 * Whether the event store holds any event of the run: then a worker continues it (`resume`) and
 * never starts it again. Read from the subject's last message, on whatever stream holds it.
 */
export async function runHasEvents(nc: NatsConnection, installation: string, runId: string): Promise<boolean> {
  const subject = runSubject(storeNames(installation), runId);
  const jsm = await nc.jetstreamManager();
  let stream: string;
  try {
    stream = await jsm.streams.find(subject);
  } catch {
    return false;
  }
  try {
    await jsm.streams.getMessage(stream, { last_by_subj: subject });
    return true;
  } catch (e) {
    if (/no message found|message not found/i.test((e as Error).message)) return false;
    throw e;
  }
}
