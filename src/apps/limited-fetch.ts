import type { FetchLike } from '@modelcontextprotocol/client';
import { MessageTooLargeError } from './line-buffer.js';

/**
 * `fetch` for an HTTP app with its `max-result` applied while reading: the
 * body of a response to a request (POST: a result, or the stream of one
 * request's messages) that grows past the limit is cut off and its source
 * cancelled, so an endless or huge body costs at most about `maxBytes` of
 * memory. The long-lived GET stream of notifications is not counted.
 */
export function createLimitedFetch(maxBytes: number, onLimit: (error: MessageTooLargeError) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body || (init?.method ?? 'GET').toUpperCase() !== 'POST') return response;
    let seen = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            const error = new MessageTooLargeError(maxBytes);
            onLimit(error);
            controller.error(error);
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
