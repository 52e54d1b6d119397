import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mcpSchemaValidator } from '../../src/mcp/schema-validator';

/**
 * Red team (issue 17): a server's input schemas are the server's, and gatehouse validates the
 * model's input against them in the orchestrator. The listing side (a schema that cannot even be
 * written out) is test/e2e/redteam17-mcp-server-frames.test.ts.
 */
describe("a hostile server's schemas", () => {
  it('a backtracking pattern cannot stall the orchestrator: the call fails validation within a second', () => {
    const validate = mcpSchemaValidator().getValidator({
      type: 'object',
      properties: {
        q: { type: 'string', pattern: '^(a+)+$' },
        list: { type: 'array', items: { pattern: '^(a|a)+$' } },
      },
    });
    const t0 = performance.now();
    // Unbounded, the first alone backtracks for hours (27 characters took 33 s).
    const r = validate({ q: `${'a'.repeat(40)}b`, list: Array.from({ length: 200 }, () => `${'a'.repeat(40)}b`) });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(r.valid).toBe(false);
    expect(r.errorMessage).toMatch(/took over 1000 ms to check/);
    // A pattern that behaves is checked as before, both ways, on the same validator.
    expect(validate({ q: 'aaa', list: ['a'] }).valid).toBe(true);
    expect(validate({ q: 'abc' }).valid).toBe(false);
  });

  it('patternProperties and propertyNames are bounded the same way', () => {
    const validate = mcpSchemaValidator().getValidator({
      type: 'object',
      propertyNames: { pattern: '^(a|aa)+$' },
      patternProperties: { '^(b+)+$': { type: 'string' } },
    });
    const t0 = performance.now();
    expect(validate({ [`${'a'.repeat(60)}c`]: 1 }).valid).toBe(false);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(validate({ aaa: 1 }).valid).toBe(true);
  });

  it("one server's $id does not stand for another's schema", () => {
    const strict = {
      $id: 'urn:gh:shared',
      type: 'object',
      properties: { n: { type: 'number' } },
      additionalProperties: false,
    } as const;
    const loose = { $id: 'urn:gh:shared', type: 'object' } as const;
    // Listed first by another server: with one validator for all, the strict tool took the loose schema.
    const a = mcpSchemaValidator().getValidator(loose);
    const b = mcpSchemaValidator().getValidator(strict);
    expect(a({ z: 1 }).valid).toBe(true);
    expect(b({ z: 1 }).valid).toBe(false);
    expect(b({ n: 1 }).valid).toBe(true);
  });

  it('a remote $ref is never fetched: the schema does not compile', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.end('{"type":"string"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const schema = { type: 'object', properties: { a: { $ref: `http://127.0.0.1:${port}/s.json` } } } as const;
      expect(() => mcpSchemaValidator().getValidator(schema)).toThrow(/can't resolve reference/);
      await new Promise((r) => setTimeout(r, 200));
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });
});
