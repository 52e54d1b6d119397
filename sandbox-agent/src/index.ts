export { startDaemon, AGENT_VERSION, type RunningDaemon } from './daemon';
export { loadConfig, type DaemonConfig } from './config';
