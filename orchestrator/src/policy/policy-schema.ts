import { z } from 'zod';
import { Approver } from '../approval/channels/approverKeys';
import { Mode } from './mode';
import type { Rule } from './rules';

/**
 * The policy file: `{"mode", "allow", "ask", "deny", "approvers"}`. A rule is a string or an
 * object with a reason and inline examples; examples are checked when the file loads, so a rule
 * that does not do what its author meant fails at load, not in production.
 */
export const RuleEntry = z.union([
  z.string().min(1),
  z.strictObject({
    rule: z.string().min(1),
    reason: z.string().optional(),
    /** Commands (bash rules) or paths (path rules) the rule must match. */
    match: z.array(z.string()).optional(),
    /** … and must not match. */
    notMatch: z.array(z.string()).optional(),
  }),
]);
export type RuleEntry = z.infer<typeof RuleEntry>;

export const PolicyFile = z.strictObject({
  $schema: z.string().optional(),
  mode: Mode.optional(),
  allow: z.array(RuleEntry).default([]),
  ask: z.array(RuleEntry).default([]),
  deny: z.array(RuleEntry).default([]),
  /** Who may answer approvals over NATS: user nkey public keys (checked as the NATS channel will). */
  approvers: z
    .array(Approver)
    .default([])
    .refine(
      (list) =>
        new Set(list.map((a) => a.publicKey)).size === list.length &&
        new Set(list.map((a) => a.name)).size === list.length,
      'each approver name and key may be listed once',
    ),
});
export type PolicyFile = z.infer<typeof PolicyFile>;

export type RuleList = 'deny' | 'ask' | 'allow';

export interface PolicyRule extends Rule {
  list: RuleList;
  index: number;
  reason: string | undefined;
  /** `deny[2] bash(git push*)`: where the rule is, for messages and the audit trail. */
  id: string;
}
