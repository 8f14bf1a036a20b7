/**
 * `render --queue`: enqueue the originals, one job per image, then gather the report as the
 * workers finish (or, `--detach`, print the batch id and go).
 */
import { InvalidArgumentError } from '../../../errors.js';
import { collectBatch } from '../../../queue/collect.js';
import type { QueueOptions } from '../../../queue/connection.js';
import { enqueueRender } from '../../../queue/enqueue.js';
import { workersConnected } from '../../../queue/status.js';
import { printData, printMessage } from '../../output.js';
import { commandSeconds, withProgress } from '../../progress.js';
import { connect, queueFlags } from '../queue/connect.js';
import { loadAltText } from './alt-text.js';
import { finishReport } from './report.js';
import type { RenderCommandOptions } from './run.js';

export interface QueueRenderOptions extends RenderCommandOptions {
  queue: QueueOptions;
  /** Enqueue, print the batch id, and exit. */
  detach: boolean;
}

export async function runQueueRender(inputs: string[], options: QueueRenderOptions): Promise<number> {
  const {
    altTextFile,
    json,
    queue: target,
    detach,
    html: _html,
    inputs: _inputs,
    reportFile: _report,
    ...renderOptions
  } = options;
  if (detach && altTextFile)
    throw new InvalidArgumentError('--alt-text goes with the report: give it to queue results');
  const altText = altTextFile ? await loadAltText(altTextFile) : undefined;
  const queue = await connect(target, true);
  try {
    // Ctrl-C from the first write on: no more jobs are added, and those added are taken out.
    const done = await withProgress(async ({ onDownload, ...hooks }) => {
      const batch = await enqueueRender(inputs, renderOptions, queue, hooks.signal);
      const jobs = `${batch.originals} original(s) in ${batch.jobs} job(s)`;
      const what = `batch ${batch.id}: ${jobs} on ${queue.where} (queue '${queue.name}')`;
      if (detach && !hooks.signal?.aborted) {
        printData(
          json ? JSON.stringify({ batch: batch.id, originals: batch.originals, jobs: batch.jobs }, null, 2) : batch.id,
        );
        printMessage(`${what}; read the report with: content-api queue results ${batch.id}${queueFlags(queue)}`);
        return null;
      }
      if (batch.jobs > 0) printMessage(`${what}; waiting for workers`);
      if (batch.jobs > 0 && !hooks.signal?.aborted && (await workersConnected(queue)) === 0) {
        printMessage(`no worker is connected yet; start one: content-api worker${queueFlags(queue)}`);
      }
      return collectBatch(queue, batch.id, { ...hooks, cancel: true, altText: altText?.lookup });
    }).catch((error: unknown) => {
      if (!(error instanceof Error && error.name === 'AbortError')) throw error;
      printMessage('interrupted: nothing was enqueued');
      return null;
    });
    if (!done) return 130;
    return done.report ? await finishReport(done.report, commandSeconds(), options, altText) : 0;
  } finally {
    await queue.close();
  }
}
