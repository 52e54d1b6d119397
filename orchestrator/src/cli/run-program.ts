import { CommanderError, type Command } from 'commander';
import { visible } from '../approval/channels/screen';
import { exitCodeFor, exitCodeOfError } from './exit-codes';

/**
 * Parses `argv` (node's form: the node binary and the script first) and runs the command it names,
 * leaving the exit code in `process.exitCode`: commander has printed its own errors (a bad flag or
 * argument; or --help, which is no error); any other error is printed here as one line.
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<void> {
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = exitCodeFor(e.exitCode === 0 ? 'ok' : 'usage');
    } else {
      // The message says what happened and what to do; the error's kind alone picks the exit code. It may
      // quote what a model, a server or a repository wrote: control bytes are shown as escapes, never sent.
      process.stderr.write(`gatehouse: ${visible(e instanceof Error ? e.message : String(e))}\n`);
      process.exitCode = exitCodeOfError(e);
    }
  }
}
