import type Docker from 'dockerode';

/**
 * The networks a sandbox container is on: its own attachments, or, when it joined a network
 * holder's namespace (orchestrator/src/sandbox/network-holder.ts), the holder's, which are then its
 * only ones. Also returns the holder's inspect, to check the holder itself.
 */
export async function sandboxNetworks(
  docker: Docker,
  info: Docker.ContainerInspectInfo,
): Promise<{ networks: string[]; holder?: Docker.ContainerInspectInfo }> {
  const mode = info.HostConfig.NetworkMode ?? '';
  if (!mode.startsWith('container:')) return { networks: Object.keys(info.NetworkSettings.Networks) };
  const holder = await docker.getContainer(mode.slice('container:'.length)).inspect();
  return { networks: Object.keys(holder.NetworkSettings.Networks), holder };
}

/** A sandbox's IPv4 address on its run network: its own, or its network holder's (which it shares). */
export async function sandboxAddress(docker: Docker, info: Docker.ContainerInspectInfo): Promise<string | undefined> {
  const { holder } = await sandboxNetworks(docker, info);
  return Object.values((holder ?? info).NetworkSettings.Networks)[0]?.IPAddress;
}
