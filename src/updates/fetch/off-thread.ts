import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UpdateError } from '../../errors.ts';
import type { ArchiveEvents, ArchiveJob } from './archive-job.ts';
import { fromWire, type WireError } from './error-wire.ts';

// A fresh isolate per download: on the main thread the pipeline kept it busy (every check-in waited behind it) and
// its garbage set off full collections in the daemon's long-lived heap (bench/README.md has the figures).

export type ToWorker = { type: 'cancel'; reason: string };
export type FromWorker =
  | { type: 'progress'; bytes: number; total: number | null }
  | { type: 'downloaded'; bytes: number; extracted: boolean }
  | { type: 'done' }
  | { type: 'failed'; error: WireError };

type WorkerSource = { code: string; eval: true } | { file: URL; eval: false };

/** The worker beside `here` (a test passes another): JavaScript in dist/, or src/ TypeScript through tsx. */
export function workerSource(here = import.meta.url): WorkerSource {
  const compiled = new URL('./archive-worker.js', here);
  if (!here.endsWith('.ts')) {
    if (existsSync(fileURLToPath(compiled))) return { file: compiled, eval: false };
    throw new UpdateError(
      `the update worker ${fileURLToPath(compiled)} is missing: dist/ is incomplete; run \`npm run build\` again, or reinstall the package`,
    );
  }
  const source = new URL('./archive-worker.ts', here).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  return {
    code: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`,
    eval: true,
  };
}

/** Left to grow, the young generation raised peak RSS by more than the whole update, no faster (bench/README.md). */
const YOUNG_GENERATION_MB = 4;

/**
 * Runs `job` in a worker; rejects with the worker's own error (error-wire.ts). On `signal` the worker is asked to stop
 * (within `cancelGraceMs`, else terminated); the promise settles only after it exited, so nothing writes after.
 */
export async function fetchArchiveOffThread(
  job: ArchiveJob,
  signal: AbortSignal,
  events: ArchiveEvents,
  { worker: from = workerSource(), cancelGraceMs = 5_000 }: { worker?: WorkerSource; cancelGraceMs?: number } = {},
): Promise<void> {
  const cancelled = () => new UpdateError('the download was cancelled', { cause: signal.reason });
  if (signal.aborted) throw cancelled();
  const options = { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } };
  const worker = from.eval ? new Worker(from.code, { ...options, eval: true }) : new Worker(from.file, options);
  let outcome: { error: Error } | { done: true } | null = null;
  let killer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? '');
    const reason = `the update was cancelled${why ? ` (${why})` : ''}`;
    worker.postMessage({ type: 'cancel', reason } satisfies ToWorker);
    killer = setTimeout(() => void worker.terminate(), cancelGraceMs);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return new Promise<void>((resolve, reject) => {
    worker.on('message', (message: FromWorker) => {
      try {
        if (message.type === 'progress') events.onProgress(message.bytes, message.total);
        else if (message.type === 'downloaded') events.onDownloaded(message.bytes, message.extracted);
        else if (message.type === 'done') {
          outcome ??= { done: true };
          // Its writes are over; fetch's connection pool would hold its exit some 0.4 s.
          void worker.terminate();
        } else outcome ??= { error: fromWire(message.error) };
      } catch (err) {
        // A listener's failure, thrown here, would be uncaught and end the daemon: it ends this update instead.
        outcome ??= { error: new UpdateError('reporting the download failed', { cause: err }) };
        void worker.terminate();
      }
    });
    worker.on('error', (err) => {
      outcome ??= { error: new UpdateError(`the update worker failed: ${err.message}`, { cause: err }) };
    });
    worker.on('exit', (code) => {
      clearTimeout(killer);
      signal.removeEventListener('abort', onAbort);
      if (outcome && 'done' in outcome) return resolve();
      if (outcome) return reject(outcome.error);
      if (signal.aborted) return reject(cancelled());
      reject(new UpdateError(`the update worker stopped (exit code ${code}) before the build was staged`));
    });
  });
}
