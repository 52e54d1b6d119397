// The daemon's entry point in every sandbox (/opt/gatehouse/agent.mjs): loads the bundled daemon
// through its code cache (load-daemon.mjs) and starts it. Nothing else runs this file.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDaemon } from './load-daemon.mjs';

const { exports, codeCache } = loadDaemon(path.dirname(fileURLToPath(import.meta.url)));
exports.runDaemon({ codeCache });
