import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UpdateError } from '../../errors.ts';
import type { ArchiveEvents, ArchiveJob } from './archive-job.ts';
import { fromWire, type WireError } from './error-wire.ts';

/*
 * Downloads, verifies and extracts a server archive (archive-job.ts) in a worker thread (archive-worker.ts), not on
 * the daemon's main thread. Two reasons, both measured on a 200 MB build: the pipeline kept the main thread ~85 %
 * busy for the whole update (every API request, check-in and log line of every instance waited behind it), and in
 * the daemon's long-lived heap its garbage set off a full mark-compact every ~40 ms (36 per update, ~0.4 s of the
 * 1.8 s; a fresh isolate takes 6 to 13). The worker is a fresh isolate per download, gone with it.
 */

/** The messages between the daemon and its update worker. */
export type ToWorker = { type: 'cancel'; reason: string };
export type FromWorker =
  | { type: 'progress'; bytes: number; total: number | null }
  | { type: 'downloaded'; bytes: number; extracted: boolean }
  | { type: 'done' }
  | { type: 'failed'; error: WireError };

/**
 * The worker's module: beside this one, as JavaScript in dist/ (its own bundle entry in dist/app/, or tsc's output
 * in dist/src/); from src/ it is TypeScript, which the worker loads through tsx as the daemon itself does.
 */
export type WorkerSource = { code: string; eval: true } | { file: URL; eval: false };

/** `here` is this module's URL: a test passes another to see a dist/ without the worker told plainly. */
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

/**
 * The worker's young generation. Its garbage is short-lived buffers' wrappers and promises; left to grow (to ~48 MB
 * at this rate of allocation), it raised the daemon's peak RSS during a first update by 73 MB, against 50–66 MB
 * with 4 MB, with no slower update (bench/update.ts, alternating runs).
 */
const YOUNG_GENERATION_MB = 4;

/** What a test may change: the worker's module (to run one that misbehaves) and the grace after a cancel. */
export interface OffThreadOptions {
  worker?: WorkerSource;
  /** How long a cancelled worker may take to stop its writes and answer before it is terminated. */
  cancelGraceMs?: number;
}

/**
 * Runs `job` in a worker. Resolves once the build is in `job.staging`; rejects with the worker's own error (class,
 * code and causes carried over, error-wire.ts). On `signal` the worker is asked to stop and answers once its writes
 * have ended; the promise settles only after the worker has exited, so nothing writes into the staging folder after.
 */
export async function fetchArchiveOffThread(
  job: ArchiveJob,
  signal: AbortSignal,
  events: ArchiveEvents,
  { worker: from = workerSource(), cancelGraceMs = 5_000 }: OffThreadOptions = {},
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
