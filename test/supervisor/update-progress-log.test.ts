import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, type BusEvents, createBus } from '../../src/bus.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { LogFields, Logger } from '../../src/log.ts';
import { createSupervisor, logUpdateProgress, UPDATE_PROGRESS_LOG_EVERY_MS } from '../../src/supervisor/supervisor.ts';
import { tempDir } from '../_support/env.ts';

interface Line {
  scope: string;
  level: string;
  msg: string;
  fields: LogFields | undefined;
}

/** A logger that keeps each line with its scope, so the test sees which instance a line was logged for. */
function scopedLogger(lines: Line[] = [], scope = 'root'): Logger & { lines: Line[] } {
  const at = (level: string) => (msg: string, fields?: LogFields) => void lines.push({ scope, level, msg, fields });
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (s) => scopedLogger(lines, `${scope}:${s}`),
  };
}

type Update = Omit<BusEvents['instance:update'], 'key'>;
/** The clock the log paces itself on: each event moves it to the event's time. */
let clock = 0;
const now = () => clock;
const emitter = (bus: Bus, key: string) => (e: Update) => {
  clock = e.at;
  bus.emit('instance:update', { key, ...e });
};
const summary = (lines: Line[]) => lines.map((l) => [l.scope, l.msg, l.fields ?? {}]);

const MB = 1_000_000;

// ---

const test = suite('update progress log');

test('update progress log :: a long download logs its start, then at most one line per interval, then each phase', () => {
  const bus = createBus();
  const log = scopedLogger();
  logUpdateProgress(bus, log, 5_000, now);
  const emit = emitter(bus, 'alpha');
  emit({ phase: 'check', revision: 'r1', at: 0 });
  emit({ phase: 'download', bytes: 0, total: null, at: 0 });
  // The provider reports every 250 ms for 12 s: 1 MB per report of 48 MB.
  for (let i = 1; i <= 48; i++) emit({ phase: 'download', bytes: i * MB, total: 48 * MB, at: i * 250 });
  emit({ phase: 'verify', bytes: 48 * MB, total: 48 * MB, at: 12_001 });
  emit({ phase: 'extract', at: 12_002 });
  emit({ phase: 'install', at: 13_000 });
  emit({ phase: 'done', revision: 'r2', durationMs: 13_000, at: 13_100 });
  assert.equal(summary(log.lines), [
    ['root:alpha:update', 'downloading update', {}],
    ['root:alpha:update', 'update download progress', { bytes: 20 * MB, total: 48 * MB, percent: 41.6 }],
    ['root:alpha:update', 'update download progress', { bytes: 40 * MB, total: 48 * MB, percent: 83.3 }],
    ['root:alpha:update', 'update download complete', { bytes: 48 * MB, total: 48 * MB, percent: 100 }],
    ['root:alpha:update', 'extracting update', {}],
    ['root:alpha:update', 'moving the new build into bin/', {}],
  ]);
  assert.ok(log.lines.every((l) => l.level === 'info'));
});

test('update progress log :: without a Content-Length only the bytes are logged', () => {
  const bus = createBus();
  const log = scopedLogger();
  logUpdateProgress(bus, log, 1_000, now);
  const emit = emitter(bus, 'alpha');
  emit({ phase: 'download', bytes: 0, total: null, at: 0 });
  emit({ phase: 'download', bytes: 5 * MB, total: null, at: 1_000 });
  assert.equal(summary(log.lines).at(-1), ['root:alpha:update', 'update download progress', { bytes: 5 * MB }]);
});

test('update progress log :: the interval defaults to the named 5 s', () => {
  assert.is(UPDATE_PROGRESS_LOG_EVERY_MS, 5_000);
  const bus = createBus();
  const log = scopedLogger();
  logUpdateProgress(bus, log, UPDATE_PROGRESS_LOG_EVERY_MS, now);
  const emit = emitter(bus, 'alpha');
  emit({ phase: 'download', bytes: 0, total: 10, at: 100 });
  emit({ phase: 'download', bytes: 1, total: 10, at: 100 + UPDATE_PROGRESS_LOG_EVERY_MS - 1 });
  assert.is(log.lines.length, 1, 'not before the interval has passed');
  emit({ phase: 'download', bytes: 2, total: 10, at: 100 + UPDATE_PROGRESS_LOG_EVERY_MS });
  assert.equal(summary(log.lines).at(-1), [
    'root:alpha:update',
    'update download progress',
    { bytes: 2, total: 10, percent: 20 },
  ]);
});

test('update progress log :: instances are throttled apart; a new run or a restarted download is announced again', () => {
  const bus = createBus();
  const log = scopedLogger();
  const stop = logUpdateProgress(bus, log, 5_000, now);
  const alpha = emitter(bus, 'alpha');
  const beta = emitter(bus, 'beta');
  alpha({ phase: 'download', bytes: 0, total: null, at: 0 });
  beta({ phase: 'download', bytes: 0, total: null, at: 1_000 });
  alpha({ phase: 'download', bytes: 10, total: 100, at: 5_000 });
  beta({ phase: 'download', bytes: 10, total: 100, at: 5_000 }); // only 4 s after beta's last line
  alpha({ phase: 'failed', error: 'cut short', at: 5_100 });
  alpha({ phase: 'download', bytes: 0, total: null, at: 5_200 }); // the next attempt
  beta({ phase: 'download', bytes: 0, total: null, at: 5_300 }); // a new download with no run boundary (a check)
  assert.equal(summary(log.lines), [
    ['root:alpha:update', 'downloading update', {}],
    ['root:beta:update', 'downloading update', {}],
    ['root:alpha:update', 'update download progress', { bytes: 10, total: 100, percent: 10 }],
    ['root:alpha:update', 'downloading update', {}],
    ['root:beta:update', 'downloading update', {}],
  ]);
  stop();
  alpha({ phase: 'verify', bytes: 1, total: 1, at: 99_000 });
  assert.is(log.lines.length, 5, 'unsubscribed');
  assert.is(bus.all.get('instance:update')?.length ?? 0, 0);
});

test('update progress log :: check, none, done and failed are left to the update actor', () => {
  const bus = createBus();
  const log = scopedLogger();
  logUpdateProgress(bus, log, 0, now);
  const emit = emitter(bus, 'alpha');
  emit({ phase: 'check', revision: null, at: 0 });
  emit({ phase: 'none', revision: null, at: 1 });
  emit({ phase: 'done', revision: 'r', durationMs: 1, at: 2 });
  emit({ phase: 'failed', error: 'x', at: 3 });
  assert.equal(log.lines, []);
});

test.run();

// ---

const wired = suite('supervisor progress logging');

wired('update progress log :: the supervisor logs update progress from the bus until it shuts down', async () => {
  const tmp = await tempDir('wd-progress-');
  try {
    await writeFile(join(tmp.path, 'appsettings.yml'), 'Servers:\n  Instances: {}\n');
    const loaded = await loadConfig({ cwd: tmp.path, env: {} });
    if (!loaded.ok) return assert.unreachable(loaded.problems.join('\n'));
    const bus = createBus();
    const log = scopedLogger();
    const supervisor = createSupervisor({
      config: loaded.config,
      bus,
      log,
      baseUrl: 'http://127.0.0.1:1/',
      publicBaseUrl: 'http://127.0.0.1:1/',
    });
    const emit = emitter(bus, 'alpha');
    emit({ phase: 'download', bytes: 0, total: null, at: 0 });
    // The wired log paces itself on the real monotonic clock: a phase change is what shows within a test.
    emit({ phase: 'verify', bytes: 50, total: 100, at: UPDATE_PROGRESS_LOG_EVERY_MS });
    assert.equal(summary(log.lines), [
      ['root:alpha:update', 'downloading update', {}],
      ['root:alpha:update', 'update download complete', { bytes: 50, total: 100, percent: 50 }],
    ]);
    await supervisor.shutdown();
    assert.is(bus.all.get('instance:update')?.length ?? 0, 0, 'let go of the bus');
  } finally {
    await tmp.cleanup();
  }
});

wired.run();
