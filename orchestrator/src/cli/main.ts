import { guardOutput } from './closed-output';
import { watchWorkerLink } from './worker-link';
import { buildProgram } from './program';
import { runProgram } from './run-program';

// First: a reader that goes away (`| head`) ends output quietly, for every command (closed-output.ts).
guardOutput();
// A run a worker started dies with its worker (cli/worker-link.ts).
watchWorkerLink();

await runProgram(buildProgram(), process.argv);
