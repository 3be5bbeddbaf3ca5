/**
 * The update worker (off-thread.ts starts it, one per download): downloads a server archive, hashing it and, for a
 * tar or tar.gz, extracting it as it arrives; a zip is saved and then extracted. Everything here ran on the daemon's
 * main thread before; see off-thread.ts for why it runs apart.
 */
import { rm } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { extractArchive } from '../archive/extract.ts';
import { archiveSink } from '../archive/sink.ts';
import { fetchVerified } from './download.ts';
import { toWire } from './error-wire.ts';
import type { ArchiveJob, FromWorker, ToWorker } from './off-thread.ts';

const port = parentPort;
if (!port) throw new Error('archive-worker.ts runs only as a worker thread (off-thread.ts starts it)');
const job = workerData as ArchiveJob;
const post = (message: FromWorker) => port.postMessage(message);
const cancel = new AbortController();
port.on('message', (message: ToWorker) => {
  if (message.type === 'cancel') cancel.abort(new Error(message.reason));
});

try {
  const into = archiveSink(job.archive, job.staging, job.limits);
  const { bytes } = await fetchVerified(
    {
      url: job.url,
      sha256: job.sha256,
      headers: job.headers,
      timeoutMs: job.timeoutMs,
      signal: cancel.signal,
      onProgress: (done, total) => post({ type: 'progress', bytes: done, total }),
    },
    into.sink,
  );
  const extracted = into.extracted();
  post({ type: 'downloaded', bytes, extracted });
  if (!extracted) {
    await extractArchive(job.archive, job.staging, cancel.signal, job.limits);
    // Removed before the staged build is flushed: its pages, still unwritten, are then dropped, not written
    // (the flush syncs the whole file system, install/flush.ts).
    await rm(job.archive, { force: true });
  }
  post({ type: 'done' });
} catch (err) {
  post({ type: 'failed', error: toWire(err) });
} finally {
  port.close();
}
