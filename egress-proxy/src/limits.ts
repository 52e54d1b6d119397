/** Bounds on what one client can make the proxy hold. */
export interface ProxyLimits {
  /** Request header bytes a client may send (Node's parser enforces it). */
  maxHeaderBytes: number;
  /** Response header bytes accepted from an upstream server. */
  maxUpstreamHeaderBytes: number;
  /** Time for a client to send its request headers. */
  headersTimeoutMs: number;
  /** A name lookup that takes longer fails. */
  lookupTimeoutMs: number;
  /** Time to open the connection to the upstream address. */
  connectTimeoutMs: number;
  /** A tunnel or forwarded exchange with no bytes either way for this long is closed. */
  idleTimeoutMs: number;
  /** Concurrent client connections; more are refused. */
  maxConnections: number;
}

export const DEFAULT_LIMITS: ProxyLimits = {
  maxHeaderBytes: 16 * 1024,
  maxUpstreamHeaderBytes: 64 * 1024,
  headersTimeoutMs: 15_000,
  lookupTimeoutMs: 10_000,
  connectTimeoutMs: 15_000,
  idleTimeoutMs: 120_000,
  maxConnections: 256,
};
