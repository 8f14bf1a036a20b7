/** A thread of the score pool (score-pool.ts): answers its requests one at a time, in order. */
import { parentPort } from 'node:worker_threads';
import { answerer, type ScoreRequest } from './score-pool.js';

const answer = answerer();
parentPort!.on('message', (request: ScoreRequest) => {
  const reply = answer(request);
  if (reply) parentPort!.postMessage(reply);
});
