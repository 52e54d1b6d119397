import type { OptionVerdict } from './options';
import type { CommandClass } from './types';
import type { Condition } from './variables';
import type { Word } from './words';

/**
 * What the command tables say of one simple command, and the shapes the judges share. A leaf: the
 * tables, the judges, the wrappers and the walker all depend on it, and it depends on none of them.
 */

/** One thing a command runs besides itself (a wrapper's command, `git bisect run CMD`, `mapfile -C CODE`). */
export type Inner =
  /** An argv (`nice git push` runs `git push`). */
  | { label: string; argv: Word[] }
  /** A shell script given as a string (`bash -c STR`); `opaque` says why even a literal one cannot be followed. */
  | { label: string; script: Word; opaque?: string }
  /** A shell that reads its script from standard input (`bash`, `bash -s`, `bash <<EOF`). */
  | { label: string; stdin: true }
  /** A shell running a script file (`bash deploy.sh`): its commands cannot be seen. */
  | { label: string; file: Word };

/** What the command table says of one simple command (commands.ts and the judges it dispatches to). */
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
  /**
   * What the command runs besides itself (`git bisect run CMD`, `mapfile -C CODE`), followed like a wrapper's command.
   */
  inner?: Inner[];
  /** Files the command writes through its options or operands (`sort -o F`, `uniq IN OUT`), for the path rules. */
  writes?: string[];
}

/** Classifies a command by name and arguments: handed to judges that classify a command they run (`npx TOOL`). */
export type Classify = (typed: string, args: readonly Word[]) => Verdict;

/** Judges one command whose class depends on its arguments: (argument words, the name as typed, the classifier). */
export type Judge = (args: readonly Word[], typed: string, classify: Classify) => Verdict;

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

/** The verdict an option judgement gives (the read-only tables, scripted.ts). */
export function fromOptions(typed: string, o: OptionVerdict): Verdict {
  const extra: Partial<Verdict> = {
    ...(o.writes.length ? { writes: o.writes } : {}),
    ...(o.conditions.length ? { conditions: o.conditions } : {}),
  };
  if (o.class === 'read-only') return { ...plain(typed, 'read-only'), ...extra };
  return v(o.class, o.reason ?? `${typed}: ${PHRASE[o.class]}`, extra);
}
