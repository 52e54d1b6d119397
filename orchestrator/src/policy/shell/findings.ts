import { mayConnect } from './redirections';
import { DEV_SINKS } from './tables/coreutils';
import { COMMAND_CLASSES, type ShellAnalysis, type SimpleCommand } from './types';
import { nonIntegers } from './evaluation';
import type { Binding, Condition } from './variables';
import type { Verdict } from './verdict';

/**
 * What the walk of one command line has found so far (classify.ts walks, this records): the
 * commands with their verdicts, the files written, the problems, and the problems that hold
 * unless some variables only ever hold integers, settled once every script of the line is seen.
 */

export const MAX_COMMANDS = 10_000;

export class Findings {
  readonly commands: SimpleCommand[] = [];
  readonly writes: string[] = [];
  readonly problems = new Set<string>();
  /** Problems that hold unless some variables only ever hold integers; see evaluation.ts. */
  protected readonly conditions: Condition[] = [];
  /** Every variable any script of the line sets, and whether it is set to integers only. */
  protected readonly bindings = new Map<string, Binding[]>();
  /** Turns the conditions that hold, given every binding seen so far, into problems. */
  protected settle(): void {
    const unsafe = nonIntegers(this.bindings);
    const holds = (c: Condition): boolean => {
      if ('names' in c) return c.names.some((n) => unsafe.has(n) || /^\d+$/.test(n));
      // Unset by the line (the fixed environment's value) or an integer: not a connection.
      if (!unsafe.has(c.name) && !/^\d+$/.test(c.name)) return false;
      return (this.bindings.get(c.name) ?? [{ integer: null }]).some(
        (b) => b.text === undefined || mayConnect(c.prefix + b.text),
      );
    };
    for (const c of this.conditions.splice(0)) if (holds(c)) this.problems.add(c.problem);
  }

  result(): ShellAnalysis {
    const followable = this.problems.size === 0;
    let rank = this.writes.length ? COMMAND_CLASSES.indexOf('write') : 0;
    for (const c of this.commands) rank = Math.max(rank, COMMAND_CLASSES.indexOf(c.class));
    return {
      commands: this.commands,
      writes: this.writes,
      followable,
      problems: [...this.problems],
      class: followable ? COMMAND_CLASSES[rank]! : 'unknown',
    };
  }

  protected write(target: string): void {
    if (!DEV_SINKS.has(target) && !this.writes.includes(target)) this.writes.push(target);
  }

  protected emit(argv: string[], verdict: Verdict, via: string[]): void {
    if (this.commands.length >= MAX_COMMANDS) {
      this.problems.add(`the command runs more than ${MAX_COMMANDS} commands`);
      return;
    }
    this.commands.push({ argv, text: argv.join(' '), class: verdict.class, reason: verdict.reason, via });
  }
}
