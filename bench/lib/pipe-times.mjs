// Where a chain step's time goes, seen from the client's end of the pipe: the
// moments this process writes a `tools/call` request to an app's stdin and
// reads an answer from its stdout. Both sides (runner and the raw client) are
// timed at the same place, so their figures compare:
//   - request → answer: the app's turn, and how long the request and the
//     answer spend in the pipes and waiting for a core;
//   - answer → next request: the client's own turn (parse the answer, record
//     it, evaluate and check the next step, build and send its request).
// A diagnostic: the hooks wrap `net.Socket`'s `write` and `emit` only while
// `fn` runs, and cost a little of their own.
import net from 'node:net';
import { median, round } from './stats.mjs';

/** Runs `fn` while timing the pipe; returns its result and the two medians per step in µs. */
export async function timePipe(fn) {
  const requests = [];
  const answers = [];
  const { write, emit } = net.Socket.prototype;
  net.Socket.prototype.write = function (chunk, ...rest) {
    if (isRequest(chunk)) requests.push(performance.now());
    return write.call(this, chunk, ...rest);
  };
  net.Socket.prototype.emit = function (event, chunk, ...rest) {
    if (event === 'data' && isAnswer(chunk)) answers.push(performance.now());
    return emit.call(this, event, chunk, ...rest);
  };
  let outcome;
  try {
    outcome = await fn();
  } finally {
    net.Socket.prototype.write = write;
    net.Socket.prototype.emit = emit;
  }
  return { outcome, ...splitTurns(requests, answers) };
}

/**
 * Pairs each request with the first answer read after it, and each answer
 * with the first request written after it (a chain has one call in flight).
 */
export function splitTurns(requests, answers) {
  const appTurns = [];
  const clientTurns = [];
  let a = 0;
  for (let r = 0; r < requests.length; r++) {
    while (a < answers.length && answers[a] < requests[r]) a++;
    if (a === answers.length) break;
    appTurns.push(answers[a] - requests[r]);
    if (r + 1 < requests.length) clientTurns.push(requests[r + 1] - answers[a]);
  }
  const us = (values) => (values.length > 0 ? round(median(values) * 1000, 0) : null);
  return { requestToAnswerUs: us(appTurns), answerToRequestUs: us(clientTurns) };
}

const text = (chunk) => (typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1', 0, 200) : '');
const isRequest = (chunk) => text(chunk).includes('"method":"tools/call"');
const isAnswer = (chunk) => text(chunk).includes('"result"');
