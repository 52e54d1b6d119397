/**
 * Size limits shared by both ends. NATS carries one message per invocation and per result, so
 * results are capped below the server's max_payload (set to NATS_MAX_PAYLOAD in our server
 * config); anything bigger leaves the sandbox through the Docker archive API instead.
 */
export const NATS_MAX_PAYLOAD = 8 * 1024 * 1024;
export const MAX_OUTPUT_CAP = 4 * 1024 * 1024;
export const DEFAULT_OUTPUT_CAP = 256 * 1024;
export const MAX_WRITE_BYTES = 4 * 1024 * 1024;
export const MAX_PATH_LENGTH = 4096;
export const MAX_TIMEOUT_MS = 60 * 60 * 1000;
export const DEFAULT_TIMEOUT_MS = 120_000;
/** The wire protocol's version: the `v` of every message between orchestrator and sandbox agent. */
export const PROTOCOL_VERSION = 1 as const;
/** Streamed output per invocation stops here; the result keeps head and tail regardless. */
export const STREAM_CAP = 16 * 1024 * 1024;
