/**
 * `content-api queue results <batch>`: a batch's report, as `render` prints it, once every job
 * has finished (or, `--no-wait`, what has).
 */
import { collectBatch } from '../../../queue/collect.js';
import type { QueueOptions } from '../../../queue/connection.js';
import { commandSeconds, withProgress } from '../../progress.js';
import { loadAltText } from '../render/alt-text.js';
import { printReport } from '../render/report.js';
import { connect } from './connect.js';

export interface QueueResultsOptions {
  altTextFile?: string | undefined;
  json: boolean;
  queue: QueueOptions;
  wait: boolean;
}

export async function runQueueResults(batchId: string, options: QueueResultsOptions): Promise<number> {
  const altText = options.altTextFile ? await loadAltText(options.altTextFile) : undefined;
  const queue = await connect(options.queue, false);
  try {
    // Ctrl-C stops waiting; the batch's jobs stay queued (reported as still queued).
    const { report } = await withProgress(({ onDownload, ...hooks }) =>
      collectBatch(queue, batchId, { ...hooks, wait: options.wait, altText: altText?.lookup }),
    );
    return printReport(report, commandSeconds(), { ...options, outDir: report.out, shard: report.shard }, altText);
  } finally {
    await queue.close();
  }
}
