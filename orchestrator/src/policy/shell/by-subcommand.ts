import { lookup, type SubcommandTable } from './tables/family';
import { PHRASE, v, type Judge } from './verdict';

/** A tool judged by its first word that is not an option (`cargo +nightly test` by `test`). */
export function bySubcommand(table: SubcommandTable): Judge {
  return (args, typed) => {
    const a = args.map((w) => w.value);
    const sub = a.find((x) => !/^[-+]/.test(x)) ?? a[0] ?? '';
    const cls = lookup(table.classes, sub) ?? table.otherwise;
    return v(
      cls,
      `${typed} ${sub}: ${cls === 'unknown' ? 'not a subcommand this classifier knows' : PHRASE[cls]}`.replace(
        / :/,
        ':',
      ),
    );
  };
}
