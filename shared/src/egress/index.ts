// Egress allowlists, shared by the orchestrator (which validates configs) and the egress proxy
// program (images/egress), which imports this folder alone: nothing here may import outside it.
export * from './ip-address';
export * from './address-class';
export * from './egress-list';
export * from './egress-policy';
export * from './egress-decision';
