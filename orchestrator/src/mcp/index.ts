export { listMcpTools, type McpServersOptions } from './mcp-servers';
export { callMcpTool } from './mcp-call';
export { recordedMcpTools } from './recorded-tools';
export { connectMcp, DEFAULT_MCP_TIMEOUT_MS, type McpConnection, type McpRunPorts } from './mcp-connection';
export { SandboxStdioTransport, endText, type SessionApproval, type SessionEnd } from './sandbox-transport';
export { allowlistedFetch } from './url-fetch';
export { mcpTool, shownDescription, type ListedTool } from './mcp-tool';
export { resultText } from './mcp-result';
export { withMcpTools } from './run-mcp-tools';
