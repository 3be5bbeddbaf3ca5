/** The update worker off-thread.ts starts per download: it runs archive-job.ts and reports by message. */
import { parentPort, workerData } from 'node:worker_threads';
import { type ArchiveJob, runArchiveJob } from './archive-job.ts';
import { toWire } from './error-wire.ts';
import type { FromWorker, ToWorker } from './off-thread.ts';

const port = parentPort;
if (!port) throw new Error('archive-worker.ts runs only as a worker thread (off-thread.ts starts it)');
const post = (message: FromWorker) => port.postMessage(message);
const cancel = new AbortController();
port.on('message', (message: ToWorker) => {
  if (message.type === 'cancel') cancel.abort(new Error(message.reason));
});

try {
  await runArchiveJob(workerData as ArchiveJob, cancel.signal, {
    onProgress: (bytes, total) => post({ type: 'progress', bytes, total }),
    onDownloaded: (bytes, extracted) => post({ type: 'downloaded', bytes, extracted }),
  });
  post({ type: 'done' });
} catch (err) {
  post({ type: 'failed', error: toWire(err) });
} finally {
  port.close();
}
