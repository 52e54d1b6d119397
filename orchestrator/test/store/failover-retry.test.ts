import { describe, expect, it } from 'vitest';
import { retryThroughFailover } from '../../src/store/failover-retry';

describe('a request to JetStream during a failover', () => {
  const failing = (errors: Error[]) => {
    let calls = 0;
    const request = () => {
      calls++;
      const e = errors.shift();
      return e === undefined ? Promise.resolve('stored') : Promise.reject(e);
    };
    return { request, calls: () => calls };
  };

  it('is tried again while the cluster answers 503 or times out, then succeeds', async () => {
    const f = failing([Object.assign(new Error('503'), { code: '503' }), new Error('TIMEOUT')]);
    await expect(retryThroughFailover(f.request, 5, 1)).resolves.toBe('stored');
    expect(f.calls()).toBe(3);
  });

  it('fails at once on anything else, and after its tries on a failover that does not end', async () => {
    const other = failing([new Error('wrong last sequence: 7')]);
    await expect(retryThroughFailover(other.request, 5, 1)).rejects.toThrow(/wrong last sequence/);
    expect(other.calls()).toBe(1);
    const endless = failing(Array.from({ length: 10 }, () => Object.assign(new Error('503'), { code: '503' })));
    await expect(retryThroughFailover(endless.request, 3, 1)).rejects.toThrow('503');
    expect(endless.calls()).toBe(3);
  });

  it('is bounded by time too: a failover outlasting withinMs ends it with tries left, the delay growing', async () => {
    const endless = failing(Array.from({ length: 1000 }, () => Object.assign(new Error('503'), { code: '503' })));
    const t0 = Date.now();
    await expect(retryThroughFailover(endless.request, 1000, 10, 300)).rejects.toThrow('503');
    expect(Date.now() - t0).toBeLessThan(1500);
    // 10, 15, 23, 35, 53, 80, 120 ms ...: far fewer requests than 300 ms / 10 ms.
    expect(endless.calls()).toBeGreaterThan(2);
    expect(endless.calls()).toBeLessThan(12);
  });
});
