import { canonicalJson } from '@gatehouse/shared';
import type { RunHead } from '../events/heads';
import type { LogKey } from '../events/key';

/**
 * A run's head as the store records it (KV, key = run id): the local head's fields, the stream
 * sequence of its last event, and a MAC under the installation key, so a head written by anyone
 * without the key is told apart. The stream itself is the anchor (delete and purge are denied);
 * the head says how far the writer had got at its last flush, and lists the run.
 */
export interface StoreHead extends RunHead {
  streamSeq: number;
  /**
   * When the stream holding the run was made (its `created`). Deny-delete keeps events in a stream,
   * not the stream itself: one deleted and made again with a genuine prefix of the run is another
   * stream, and a head from before says so. Absent in heads of an older gatehouse.
   */
  stream?: string;
}

export function encodeStoreHead(key: LogKey, head: StoreHead): string {
  return JSON.stringify({ ...head, mac: key.macHead(canonicalJson(head)) });
}

export function decodeStoreHead(key: LogKey, text: string): StoreHead | { refusal: string } {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { refusal: 'its head in the store is not JSON' };
  }
  const { mac, ...head } = raw;
  if (typeof mac !== 'string' || !key.checkHeadMac(canonicalJson(head), mac))
    return { refusal: "its head in the store does not verify with this installation's key" };
  return head as unknown as StoreHead;
}
