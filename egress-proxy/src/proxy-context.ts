import type { EgressDecision, EgressPhase, EgressPolicy } from '@gatehouse/shared/egress';
import type { ProxyLimits } from './limits';

/** What every request handler of one proxy shares. */
export interface ProxyContext {
  policy: EgressPolicy;
  phase: EgressPhase;
  limits: ProxyLimits;
  /** Lower-case names that mean the proxy itself (its alias and host name). */
  selfNames: ReadonlySet<string>;
  /** True for an address of the proxy's own (its interfaces', loopback). */
  isOwnAddress(address: string): boolean;
  ownPort(): number;
  log(decision: EgressDecision): void;
}
