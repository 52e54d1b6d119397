import { GatehouseError } from '../errors';

/**
 * JSON with the position of a syntax error as a line and column (Node's own messages give a
 * position for some errors and none for others), and duplicate keys found: `JSON.parse` keeps the
 * last silently, so a file that says one thing twice would be read as only one of them.
 */
export type JsonText =
  | { ok: true; value: unknown; duplicates: { path: string; line: number; column: number }[] }
  | { ok: false; line: number; column: number; message: string };

/** Where and why the text stops being JSON; caught here and turned into a line and column. */
export class JsonSyntaxError extends GatehouseError {
  readonly kind = 'usage';
  constructor(
    readonly at: number,
    message: string,
  ) {
    super(message);
  }
}

export function parseJsonText(text: string): JsonText {
  const duplicates: { at: number; path: string }[] = [];
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (what: string): never => {
    if (i >= text.length) throw new JsonSyntaxError(i, `unexpected end of file, expected ${what}`);
    throw new JsonSyntaxError(i, `unexpected ${JSON.stringify(text[i])}, expected ${what}`);
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) throw new JsonSyntaxError(i, 'a line break or control character inside a string (write \\n)');
      if (text[i] === '\\') {
        const esc = text[i + 1] ?? '';
        if (esc === 'u' && !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
          throw new JsonSyntaxError(i, 'a \\u escape needs four hex digits');
        if (!'"\\/bfnrtu'.includes(esc) || esc === '') throw new JsonSyntaxError(i, `invalid escape \\${esc}`);
        i += esc === 'u' ? 6 : 2;
      } else i++;
    }
    if (i >= text.length) throw new JsonSyntaxError(start, 'a string is not closed with "');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      const seen = new Set<string>();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') expect(text[i] === '}' ? 'another key (no comma after the last entry)' : 'a "key"');
        const keyAt = i;
        const key = string();
        const child = path ? `${path}.${key}` : key;
        if (seen.has(key)) duplicates.push({ at: keyAt, path: child });
        seen.add(key);
        ws();
        if (text[i] !== ':') expect('":" after the key');
        i++;
        value(child);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else expect('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (let n = 0; ; n++) {
        ws();
        if (text[i] === ']') expect('another value (no comma after the last entry)');
        value(`${path}[${n}]`);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else expect('"," or "]"');
      }
    }
    if (c === '"') return void string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!literal) expect('a value (a string in "double quotes", a number, true, false, null, [ or {)');
    i += literal![0].length;
  };
  try {
    value('');
    ws();
    if (i < text.length) expect('the end of the file (one JSON value per file)');
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return { ok: false, ...lineColumn(text, e.at), message: e.message };
  }
  return {
    ok: true,
    value: JSON.parse(text) as unknown,
    duplicates: duplicates.map((d) => ({ path: d.path, ...lineColumn(text, d.at) })),
  };
}

function lineColumn(text: string, at: number): { line: number; column: number } {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, column: at - before.lastIndexOf('\n') };
}
