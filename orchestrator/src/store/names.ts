import { StoreUrlError } from './store-errors';

/**
 * Where an installation's runs live in JetStream. One stream per installation (its log key's id),
 * one subject per run, a KV bucket of run heads and an object store bucket of run files. The
 * installation id is 16 hex digits and a run id is `[A-Za-z0-9_-]`, so both are single subject tokens.
 */
export interface StoreNames {
  stream: string;
  /** Every run's subject is under it: `<subjects>.<runId>`. */
  subjects: string;
  heads: string;
  files: string;
}

export function storeNames(installation: string): StoreNames {
  return {
    stream: `GATEHOUSE_EVENTS_${installation}`,
    subjects: `gatehouse.events.${installation}`,
    heads: `GATEHOUSE_HEADS_${installation}`,
    files: `GATEHOUSE_FILES_${installation}`,
  };
}

export const runSubject = (names: StoreNames, runId: string): string => `${names.subjects}.${runId}`;

/** The message id of a run's event: a retried append of the same event is stored once. */
export const eventMsgId = (runId: string, seq: number): string => `${runId}:${seq}`;

/** The store named by `--store` (or GATEHOUSE_STORE): nats://HOST:PORT, several comma-separated for a cluster. */
export interface StoreUrl {
  url: string;
  servers: string[];
  /** Stream, KV and object store replicas wanted (`?replicas=N`; default min(3, cluster size)). */
  replicas?: number;
}

export function parseStoreUrl(raw: string): StoreUrl {
  const [list = '', query = ''] = raw.trim().split('?', 2);
  const servers = list.split(',').map((s) => s.trim());
  for (const s of servers) {
    if (!/^nats:\/\/[^\s/?#]+:\d{1,5}\/?$/.test(s))
      throw new StoreUrlError(
        `--store ${JSON.stringify(raw)} is not a NATS URL: give nats://HOST:PORT (several separated by commas ` +
          'for a cluster), e.g. --store nats://127.0.0.1:4222, or leave it out to keep runs in the state directory',
      );
  }
  const out: StoreUrl = { url: raw.trim(), servers: servers.map((s) => s.replace(/\/$/, '')) };
  if (query) {
    const m = /^replicas=([1-5])$/.exec(query);
    if (!m) throw new StoreUrlError(`--store ${JSON.stringify(raw)}: the only option is ?replicas=N (1 to 5)`);
    out.replicas = Number(m[1]);
  }
  return out;
}

/** The store chosen: the flag, else GATEHOUSE_STORE, else none (the JSONL store only). */
export function chosenStore(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): StoreUrl | undefined {
  const raw = flag ?? (env.GATEHOUSE_STORE || undefined);
  return raw === undefined ? undefined : parseStoreUrl(raw);
}
