import { hasFlag, operands } from './arguments';
import { bySubcommand } from './by-subcommand';
import { SYSTEM_SUBCOMMANDS } from './tables/system-tools';
import { v, type Judge } from './verdict';

/** Judges for the system tools whose arguments matter (tables/system-tools.ts). */

/** `hostname -F FILE` and `hostname -b NAME` set the name too; only these options print. */
const HOSTNAME_PRINTS =
  /^(-[sfdiIaAyn]+|--(short|fqdn|long|domain|ip-addresses?|all-ip-addresses|alias|all-fqdns|nis|yp|node|help|version))$/;

/** The judges of this family, by command name. */
export const SYSTEM_JUDGES: Record<string, Judge> = {
  crontab: (args) =>
    hasFlag(
      args.map((w) => w.value),
      'l',
    )
      ? v('read-only', 'crontab -l lists jobs')
      : v('privilege', 'crontab schedules commands'),
  hostname: (args) => {
    const a = args.map((w) => w.value);
    return operands(a).length || a.some((x) => !HOSTNAME_PRINTS.test(x))
      ? v('privilege', 'hostname with an operand or option other than printing ones changes the host name')
      : v('read-only', 'hostname prints the host name');
  },
  ...Object.fromEntries(Object.entries(SYSTEM_SUBCOMMANDS).map(([name, table]) => [name, bySubcommand(table)])),
};
