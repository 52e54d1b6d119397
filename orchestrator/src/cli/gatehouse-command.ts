import { Command, type ParseOptionsResult } from 'commander';
import { closeMatches } from '../problems/close-match';

/**
 * commander's Command, with unknown flags reported the way a person can act on: every unknown flag
 * of the command at once, each with the closest flag it has, and before commander's check for a
 * missing required option — so `run x --modle m` names `--modle` instead of saying --model is
 * missing. Subcommands made with `.command()` are of this class too. Unknown commands are
 * commander's to report (it names the closest).
 */
export class GatehouseCommand extends Command {
  override createCommand(name?: string): Command {
    return new GatehouseCommand(name);
  }

  override parseOptions(argv: string[]): ParseOptionsResult {
    const parsed = super.parseOptions(argv);
    // Only a command without subcommands judges its flags here: a parent cannot tell its own
    // flags' typos from its subcommand's (commander hands the subcommand's name over separately),
    // so commander's own check, one flag with its closest, answers for `runs --jsn`.
    if (this.commands.length > 0) return parsed;
    const flags = unknownFlags(parsed.unknown);
    // --help is commander's to answer (it arrives here as unknown).
    if (flags.length === 0 || flags.some((f) => f === '--help' || f === '-h')) return parsed;
    const known = this.knownFlags();
    const lines = flags.map((flag) => {
      const name = flag.replace(/=.*$/s, '');
      // `--json=1`: a known flag that takes no value.
      if (name !== flag && known.includes(name)) return `error: option '${name}' takes no value, got '${flag}'`;
      return `error: unknown option '${flag}'${suggestion(name, known)}`;
    });
    this.error(`${lines.join('\n')}\n(${this.commandPath()} --help lists its options)`, {
      code: 'commander.unknownOption',
    });
  }

  /** The long flags this command takes, its parents' included (commander accepts those here too). */
  private knownFlags(): string[] {
    const flags = ['--help'];
    for (const c of lineage(this)) for (const o of c.options) if (o.long) flags.push(o.long);
    return flags;
  }

  private commandPath(): string {
    const names: string[] = [];
    for (const c of lineage(this)) names.unshift(c.name());
    return names.join(' ');
  }
}

/** The flags among the arguments commander did not know (values of unknown flags follow them; `--` ends flags). */
function unknownFlags(unknown: readonly string[]): string[] {
  const end = unknown.indexOf('--');
  return (end < 0 ? unknown : unknown.slice(0, end)).filter((a) => /^--?[A-Za-z]/.test(a));
}

function suggestion(flag: string, known: readonly string[]): string {
  if (!flag.startsWith('--')) return '';
  const bare = (f: string): string => f.replace(/^-+/, '');
  const close = closeMatches(bare(flag), known.map(bare));
  return close.length ? ` (did you mean --${close.slice(0, 2).join(' or --')}?)` : '';
}

/** A command and its parents, nearest first. */
function lineage(command: Command): Command[] {
  const out: Command[] = [];
  for (let c: Command | null = command; c; c = c.parent) out.push(c);
  return out;
}
