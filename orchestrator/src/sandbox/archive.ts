import type Docker from 'dockerode';
import tarStream from 'tar-stream';
import { nodeStream } from './streams';

export interface ArchiveFile {
  name: string;
  content: string | Buffer;
  mode?: number;
  uid?: number;
  gid?: number;
}

/** Puts small files (credentials, configuration) into a container, created or running. */
export async function putFiles(container: Docker.Container, dir: string, files: ArchiveFile[]): Promise<void> {
  const pack = tarStream.pack();
  for (const f of files) {
    pack.entry({ name: f.name, mode: f.mode ?? 0o644, uid: f.uid ?? 0, gid: f.gid ?? 0 }, f.content);
  }
  pack.finalize();
  await container.putArchive(nodeStream(pack), { path: dir });
}

/** Reads one file out of a container through the archive API. */
export async function readFileFrom(container: Docker.Container, file: string, maxBytes = 1024 * 1024): Promise<Buffer> {
  const stream = await container.getArchive({ path: file });
  const extract = tarStream.extract();
  return new Promise<Buffer>((resolve, reject) => {
    let found: Buffer | undefined;
    extract.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      let size = 0;
      body.on('data', (data: unknown) => {
        const c = data as Buffer;
        size += c.length;
        if (size <= maxBytes) chunks.push(c);
      });
      body.on('end', () => {
        if (found === undefined && header.type === 'file') {
          if (size > maxBytes) return reject(new Error(`${file} is larger than ${maxBytes} bytes`));
          found = Buffer.concat(chunks);
        }
        next();
      });
      body.resume();
    });
    extract.on('finish', () => (found ? resolve(found) : reject(new Error(`${file} not found in the archive`))));
    extract.on('error', reject);
    stream.on('error', reject);
    stream.pipe(extract);
  });
}
