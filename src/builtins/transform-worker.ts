// Runs JSONata expressions for `runner.transform`, off the main thread: an
// expression can loop for as long as it likes or build a huge value, and the
// pool (transform-pool.ts) ends this thread at the step's timeout or its
// memory limit without the runner noticing more than a failed step.
import { parentPort } from 'node:worker_threads';
import jsonata from 'jsonata';

/** A request from the pool. */
export interface TransformRequest {
  id: number;
  expression: string;
  input: unknown;
  maxResultBytes: number;
}

/** The answer: the result as JSON text (what a step can hold), or what went wrong and where in the expression. */
export type TransformResponse =
  | { id: number; ok: true; json: string }
  | { id: number; ok: false; message: string; position?: number; code?: string };

const compiled = new Map<string, ReturnType<typeof jsonata>>();

async function evaluate({ id, expression, input, maxResultBytes }: TransformRequest): Promise<TransformResponse> {
  try {
    let program = compiled.get(expression);
    if (!program) {
      program = jsonata(expression);
      if (compiled.size >= 256) compiled.delete(compiled.keys().next().value!);
      compiled.set(expression, program);
    }
    // JSON text drops what JSON cannot hold (functions, sequence flags); no match is null.
    const json = JSON.stringify((await program.evaluate(input)) ?? null) ?? 'null';
    if (json.length > maxResultBytes) {
      return { id, ok: false, message: `the result is ${json.length.toLocaleString('en-US')} characters of JSON, over the limit of ${maxResultBytes.toLocaleString('en-US')}` };
    }
    return { id, ok: true, json };
  } catch (error) {
    const failure = error as { message?: string; position?: number; code?: string };
    return { id, ok: false, message: failure.message ?? String(error), position: failure.position, code: failure.code };
  }
}

parentPort?.on('message', (request: TransformRequest) => {
  void evaluate(request).then((response) => parentPort!.postMessage(response));
});
