import { hasFlag, operands } from './arguments';
import { gofmt, yq } from './query-tools';
import { awk, sed, tar } from './scripted';
import { DEV_SINKS } from './tables/coreutils';
import { fromOptions, v, type Judge } from './verdict';

/**
 * Judges for the everyday tools of tables/coreutils.ts whose arguments matter beyond their options
 * (the read-only tools with an option allowlist are judged from tables/readonly.ts instead).
 */

/** The judges of this family, by command name. */
export const COREUTILS_JUDGES: Record<string, Judge> = {
  sed: (args, typed) => fromOptions(typed, sed(args)),
  awk: (args, typed) => fromOptions(typed, awk(args)),
  tee: (args) =>
    operands(args.map((w) => w.value)).some((f) => !DEV_SINKS.has(f))
      ? v('write', 'tee writes files')
      : v('read-only', 'tee only prints'),
  chmod: (args) => {
    const mode = operands(args.map((w) => w.value))[0] ?? '';
    return /s/.test(mode) || /^[2-7][0-7]{3}$/.test(mode)
      ? v('privilege', 'chmod sets a setuid/setgid bit')
      : v('write', 'chmod changes permissions');
  },
  tar: (args, typed) => fromOptions(typed, tar(args)),
  gzip: (args, typed) =>
    hasFlag(
      args.map((w) => w.value),
      'clt',
      '--stdout',
      '--to-stdout',
      '--list',
      '--test',
    )
      ? v('read-only', `${typed} -c only prints`)
      : v('write', `${typed} replaces files with (de)compressed ones`),
  unzip: (args) =>
    hasFlag(
      args.map((w) => w.value),
      'lvtZp',
    )
      ? v('read-only', 'unzip -l lists an archive')
      : v('write', 'unzip extracts files'),
  gofmt: (args) => v(...gofmt(args)),
  yq: (args) => v(...yq(args)),
  // ack reads options, --pager among them, from a .ackrc the project can ship.
  ack: () => v('unknown', "ack reads options (such as --pager) from the project's .ackrc"),
  source: () =>
    v('unknown', 'source runs a script file in this shell', {
      problem: 'source runs a script file whose commands cannot be seen',
    }),
  '.': () =>
    v('unknown', '. runs a script file in this shell', {
      problem: '. runs a script file whose commands cannot be seen',
    }),
};
