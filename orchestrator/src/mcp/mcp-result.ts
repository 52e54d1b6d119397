/** One content block of a tool result, as the SDK parses it (types.ts ContentBlock), read loosely. */
interface Block {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
}

/**
 * What the model is shown of an MCP tool's result: text blocks as they are, embedded text resources
 * with their URI, and for images, audio, binary resources and links a line that says what was left
 * out (the model reads text; binary data would only spend its context). Structured content is shown
 * as JSON when there is no content block. The pipeline then bounds the text like any observation.
 */
export function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const parts = blocks.map(blockText);
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  return parts.join('\n');
}

function blockText(b: Block): string {
  switch (b.type) {
    case 'text':
      return b.text ?? '';
    case 'image':
    case 'audio':
      return `[${b.type} ${b.mimeType ?? ''}: ${approxBytes(b.data)} bytes, not shown]`;
    case 'resource_link':
      return `[resource link ${b.uri ?? ''}${b.name ? ` (${b.name})` : ''}]`;
    case 'resource': {
      const r = b.resource ?? {};
      if (typeof r.text === 'string') return `[resource ${r.uri ?? ''}]\n${r.text}`;
      return `[resource ${r.uri ?? ''} ${r.mimeType ?? ''}: ${approxBytes(r.blob)} bytes of binary data, not shown]`;
    }
    default:
      return `[a content block of type ${JSON.stringify(String(b.type)).slice(0, 40)}, not shown]`;
  }
}

function approxBytes(base64: string | undefined): number {
  return base64 ? Math.floor((base64.length * 3) / 4) : 0;
}
