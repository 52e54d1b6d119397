/**
 * Keeps the head and the tail of a byte stream within a fixed budget and counts the rest, so an
 * output flood costs a bounded amount of memory however long it runs.
 */
export class HeadTailBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  get truncated(): boolean {
    return this.total > this.cap;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headCap = Math.ceil(this.cap / 2);
    if (this.headBytes < headCap) {
      const take = Math.min(chunk.length, headCap - this.headBytes);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    const tailCap = this.cap - headCap;
    if (tailCap === 0) return;
    if (chunk.length >= tailCap) {
      this.tail = [Buffer.from(chunk.subarray(chunk.length - tailCap))];
      this.tailBytes = tailCap;
      return;
    }
    this.tail.push(Buffer.from(chunk));
    this.tailBytes += chunk.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= tailCap) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  /** The kept text; when bytes were dropped, a marker says how many and where. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    if (!this.truncated) return head + Buffer.concat(this.tail).toString('utf8');
    let tail = Buffer.concat(this.tail);
    const tailCap = this.cap - Math.ceil(this.cap / 2);
    if (tail.length > tailCap) tail = tail.subarray(tail.length - tailCap);
    const dropped = this.total - this.headBytes - tail.length;
    return `${head}\n[… ${dropped} bytes omitted …]\n${tail.toString('utf8')}`;
  }
}
