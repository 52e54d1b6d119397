/** The tools only runs with memory see (`gatehouse run --memory`, docs/memory.md). */
export const MEMORY_TOOLS: readonly string[] = ['remember'];
