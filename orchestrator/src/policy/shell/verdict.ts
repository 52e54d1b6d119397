import type { CommandClass } from './types';
import type { Condition } from './variables';
import type { Inner } from './wrappers';
import type { Word } from './words';

/** What the command table says of one simple command (commands.ts, git-command.ts, builtins.ts). */
export interface Verdict {
  class: CommandClass;
  /** A few words shown to approvers. */
  reason: string;
  /** The argv rules should see, when it differs from what was typed (`git -C . push` → `git push`). */
  argv?: string[];
  /** Set when the command cannot be followed (`source f`, `git $SUB`): the line is then asked. */
  problem?: string;
  /** Problems that hold unless some variables only ever hold integers (`wait $pid`). */
  conditions?: Condition[];
  /** What the command runs besides itself (`git bisect run CMD`, `mapfile -C CODE`), followed like a wrapper's command. */
  inner?: Inner[];
  /** Files the command writes through its options or operands (`sort -o F`, `uniq IN OUT`), for the path rules. */
  writes?: string[];
}

export const PHRASE: Record<CommandClass, string> = {
  'read-only': 'only reads or prints',
  'test-build': 'builds, lints or runs tests',
  write: 'changes files',
  destructive: 'deletes or destroys data',
  network: 'reaches the network',
  privilege: 'needs or changes privileges',
  unknown: 'not a command this classifier knows',
};

export const v = (cls: CommandClass, reason: string, extra: Partial<Verdict> = {}): Verdict => ({
  class: cls,
  reason,
  ...extra,
});
export const plain = (name: string, cls: CommandClass): Verdict => v(cls, `${name}: ${PHRASE[cls]}`);

/**
 * A word only known at run time where it could turn out to be an option that runs commands: a
 * problem, unless it is an integer or a variable the line never sets (whose value is the fixed
 * environment's); see evaluation.ts.
 */
export function runTimeWord(w: Word, problem: string): Partial<Verdict> {
  return w.numeric ? { conditions: [{ names: w.numeric, problem }] } : { problem };
}
