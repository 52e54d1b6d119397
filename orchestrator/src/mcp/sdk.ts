import { createRequire } from 'node:module';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ErrorCode, JSONRPCMessageSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/**
 * The MCP SDK, loaded only when a run has MCP servers (or a replay has MCP tools): importing it at
 * start costs every gatehouse command a few hundred milliseconds, most of which never use it.
 */
export interface Sdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  JSONRPCMessageSchema: typeof JSONRPCMessageSchema;
  ErrorCode: typeof ErrorCode;
  McpError: typeof McpError;
  AjvJsonSchemaValidator: typeof AjvJsonSchemaValidator;
}

let loading: Promise<Sdk> | undefined;

export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]).then(([client, http, types, ajv]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator,
  }));
  return loading;
}

/** The SDK's JSON schema validator, for code that cannot wait (a replay's recorded tools). */
export function loadValidatorSync(): typeof AjvJsonSchemaValidator {
  const require = createRequire(import.meta.url);
  return (
    require('@modelcontextprotocol/sdk/validation/ajv') as { AjvJsonSchemaValidator: typeof AjvJsonSchemaValidator }
  ).AjvJsonSchemaValidator;
}
