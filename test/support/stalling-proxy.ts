import net from 'node:net';

/**
 * A loopback TCP proxy to a real server that can go silent at an exact point: after `stallAfter(n)`,
 * it forwards n more bytes from the server and then nothing in either direction, connections left
 * open, as a frozen node looks to its clients. `release()` drops the stalled connections and passes
 * new ones through again. Unlike `docker pause` timed against a read, the stall cannot come too late:
 * an idle machine had read a whole 40 MiB file before the pause took hold.
 */
export interface StallingProxy {
  url: string;
  stallAfter(bytes: number): void;
  /** Whether a stall has taken hold (the budget ran out). */
  stalled(): boolean;
  release(): void;
  close(): Promise<void>;
}

export async function stallingProxy(target: { host: string; port: number }): Promise<StallingProxy> {
  let budget = Infinity;
  let holding = false;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    if (holding) {
      // A frozen node's kernel still accepts; nothing more happens.
      pairs.add({ client, upstream: client });
      client.on('error', () => undefined);
      return;
    }
    const upstream = net.connect(target);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (b: Buffer) => {
      if (!holding) upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => {
      if (holding) return;
      if (b.length <= budget) {
        budget -= b.length;
        client.write(b);
        return;
      }
      client.write(b.subarray(0, budget));
      budget = 0;
      holding = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `nats://127.0.0.1:${port}`,
    stallAfter: (bytes) => {
      budget = bytes;
    },
    stalled: () => holding,
    release: () => {
      holding = false;
      budget = Infinity;
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      pairs.clear();
    },
    close: async () => {
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
