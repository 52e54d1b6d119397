import { DEFAULT_MODE, modeRank, type Mode, type PolicyFile } from '../policy/index';

/**
 * The policy a run started through `gatehouse mcp serve` is held to: the server's `--policy`,
 * narrowed by every other policy that reaches the run (the caller's config, the repository's
 * own). Strictest wins, whatever the others say: their deny and ask rules are added to the
 * server's (deny, then ask, then allow decides, so an added rule can only make a decision
 * stricter), the mode is the strictest of all, and only the server's allow rules and approvers
 * count — a caller cannot add an allow rule, an approver or a wider mode.
 */
export function combinedPolicy(server: PolicyFile, narrowing: readonly PolicyFile[]): PolicyFile & { mode: Mode } {
  const modes: Mode[] = [server.mode ?? DEFAULT_MODE, ...narrowing.flatMap((p) => (p.mode ? [p.mode] : []))];
  const mode = modes.reduce((a, b) => (modeRank(b) < modeRank(a) ? b : a));
  return {
    mode,
    allow: server.allow,
    ask: [...server.ask, ...narrowing.flatMap((p) => p.ask)],
    deny: [...server.deny, ...narrowing.flatMap((p) => p.deny)],
    approvers: server.approvers,
  };
}

/** What the narrowing policies asked for and did not get, for the caller to see. */
export function ignoredByCombination(
  narrowing: ReadonlyArray<{ file: PolicyFile; source: string }>,
  mode: Mode,
): string[] {
  return narrowing.flatMap(({ file, source }) => [
    ...(file.allow.length ? [`not taken from ${source}: ${file.allow.length} allow rule(s)`] : []),
    ...(file.approvers.length ? [`not taken from ${source}: ${file.approvers.length} approver(s)`] : []),
    ...(file.mode && modeRank(file.mode) > modeRank(mode) ? [`not taken from ${source}: mode ${file.mode}`] : []),
  ]);
}
