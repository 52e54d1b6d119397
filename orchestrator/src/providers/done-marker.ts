/**
 * Whether an OpenAI-style event stream ended with its `data: [DONE]` line. The SDK's stream
 * iterator ends quietly both after `[DONE]` and when a connection is cut short, so only the raw
 * body can tell a complete reply (some compatible servers send `[DONE]` but never a finish_reason)
 * from a dropped one. The wrapper passes every byte through unchanged and only watches the lines.
 */
export class DoneMarkerWatch {
  readonly #seen = new WeakMap<Response, { done: boolean }>();
  readonly fetch: typeof fetch;

  /** `inner` is the fetch to wrap (the global one, looked up at each call, when absent). */
  constructor(inner?: typeof fetch) {
    this.fetch = async (input, init) => {
      const response = await (inner ?? globalThis.fetch)(input, init);
      if (!response.ok || response.body === null) return response;
      const state = { done: false };
      const watched = new Response(response.body.pipeThrough(doneLineScanner(state)), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
      this.#seen.set(watched, state);
      return watched;
    };
  }

  /** True once the response's body has carried a whole `data: [DONE]` line. */
  sawDone(response: Response): boolean {
    return this.#seen.get(response)?.done ?? false;
  }
}

/** A pass-through that sets `state.done` on a whole `data: [DONE]` line (with or without the space, as SSE allows). */
function doneLineScanner(state: { done: boolean }): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let partial = '';
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      const lines = (partial + decoder.decode(chunk, { stream: true })).split(/\r\n|\r|\n/);
      // The last piece has no line ending yet: a line cut mid-way is not a marker. Only a line's
      // start can make it one, so a long line is not kept whole.
      partial = (lines.pop() ?? '').slice(0, 16);
      if (lines.some((line) => /^data: ?\[DONE\]/.test(line))) {
        state.done = true;
        // The reply is whole: the body ends here for the SDK. What the server does next (hold the
        // connection open, reset it) can neither hang the run nor turn a whole reply into a failure
        // that is retried and billed again. Cancelling the source closes the connection.
        controller.terminate();
      }
    },
  });
}
