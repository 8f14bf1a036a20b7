/**
 * Reaching the queue from a command: its warnings said once, and the flags that name it again.
 */
import { connectQueue, type QueueConnection, type QueueOptions } from '../../../queue/connection.js';
import { DEFAULT_QUEUE_NAME } from '../../../queue/protocol.js';
import { printMessage, stderrStyles } from '../../output.js';

export async function connect(target: QueueOptions, claim: boolean | 'look'): Promise<QueueConnection> {
  const queue = await connectQueue(target, claim);
  for (const warning of queue.warnings) printMessage(`${stderrStyles().yellow('warning')}: ${warning}`);
  return queue;
}

/** ` --queue <url> [--queue-name <name>]`, for a command to copy. */
export const queueFlags = (queue: QueueConnection) =>
  ` --queue ${queue.where}${queue.name === DEFAULT_QUEUE_NAME ? '' : ` --queue-name ${queue.name}`}`;
