import { CommanderError } from 'commander';
import { exitCodeFor, exitCodeOfError } from './exit-codes';
import { guardOutput } from './closed-output';
import { watchWorkerLink } from './worker-link';
import { visible } from '../approval/channels/screen';
import { buildProgram } from './program';

// First: a reader that goes away (`| head`) ends output quietly, for every command (closed-output.ts).
guardOutput();
// A run a worker started dies with its worker (cli/worker-link.ts).
watchWorkerLink();

const program = buildProgram();

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Commander has printed its message (a bad flag or argument; or --help, which is no error).
    process.exitCode = exitCodeFor(e.exitCode === 0 ? 'ok' : 'usage');
  } else {
    // The message says what happened and what to do; the error's kind alone picks the exit code. It may
    // quote what a model, a server or a repository wrote: control bytes are shown as escapes, never sent.
    process.stderr.write(`gatehouse: ${visible(e instanceof Error ? e.message : String(e))}\n`);
    process.exitCode = exitCodeOfError(e);
  }
}
