import { InvalidArgumentError, type Command } from 'commander';
import { DOCKER_HOST_FORMS, DockerHostSyntaxError, parseDockerHost } from '../sandbox/docker-host';
import { useDockerHost } from '../sandbox/docker';

/**
 * `--docker-host URL`: the Docker engine a command's sandboxes, egress proxies and NATS server run
 * on (docs/docker-hosts.md). Any command that starts containers takes it; the preAction hook in
 * main.ts applies it before the command's action runs, so nothing has to pass it down.
 */
export function dockerHostOption(cmd: Command): Command {
  return cmd.option(
    '--docker-host <url>',
    `the Docker engine to use: ${DOCKER_HOST_FORMS} (default: $DOCKER_HOST, else the local socket; ` +
      'TLS from $DOCKER_TLS_VERIFY and $DOCKER_CERT_PATH)',
    parseDockerHostFlag,
  );
}

/** A value that is not a Docker host URL is a usage error (exit 2) that says what is accepted. */
export function parseDockerHostFlag(value: string): string {
  try {
    parseDockerHost(value);
  } catch (e) {
    if (e instanceof DockerHostSyntaxError) throw new InvalidArgumentError(e.message);
    throw e;
  }
  return value;
}

/** Points the process's Docker client at the command's --docker-host, if it has one. */
export function applyDockerHostOption(action: Command): void {
  const url = action.opts<{ dockerHost?: unknown }>().dockerHost;
  if (typeof url === 'string') useDockerHost(url);
}
