/**
 * The disk watcher on a real small file system (tmpfs), at a shrunk check interval: one `daemon:disk-low` when it fills,
 * one `daemon:disk-recovered` when it is freed, folders on one device read as one file system, and a removed folder is a
 * reading with its error while the watch goes on.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type BusEvents, createBus } from '../../src/bus.ts';
import type { DiskSettings } from '../../src/config/sections/disk.ts';
import { watchDisks } from '../../src/daemon/disk-watch.ts';
import { waitFor } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';
import { type SmallFs, smallDiskSuite } from '../_support/tmpfs.ts';

const MB = 1_000_000;
// A 4 MB disk: low below 1 MB (the lower of 1 MB and 50 % of 4 MB), read every 30 ms.
const settings: DiskSettings = { LowFreeMegabytes: 1, LowFreePercent: 50, CheckSeconds: 0.03 };

const { s, test } = smallDiskSuite('disk watch', 4 * MB, async (ctx) => {
  await mkdir(join(ctx.fs.path, 'instances'));
});

/** Starts a watcher and records what it puts on the bus. */
function watch(folders: Array<{ holds: string; path: string }>) {
  const bus = createBus();
  const events: Array<{ type: 'low' | 'recovered'; e: BusEvents['daemon:disk-low'] }> = [];
  let checks = 0;
  bus.on('daemon:disk-low', (e) => events.push({ type: 'low', e }));
  bus.on('daemon:disk-recovered', (e) => events.push({ type: 'recovered', e }));
  bus.on('daemon:disk-checked', () => checks++);
  const log = recordingLogger();
  const w = watchDisks({ folders, settings: () => settings, bus, log });
  /** Resolves after `n` more checks. */
  const moreChecks = async (n: number) => {
    const target = checks + n;
    await waitFor(`${n} more disk checks`, () => checks >= target, 10_000);
  };
  return { w, events, log, moreChecks };
}

test('watch :: one low event when the disk fills, one recovered event when it is freed', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const instances = join(fs.path, 'instances');
  const { w, events, moreChecks } = watch([
    { holds: 'instances', path: instances },
    { holds: 'working folder', path: ctx.work },
  ]);
  try {
    await w.settled();
    const first = w.readings();
    assert.is(first.length, 2, 'two file systems');
    const inst = first.find((r) => r.holds === 'instances');
    assert.ok(inst, 'the instance root is read');
    assert.is(inst.mount, fs.path);
    assert.is(inst.low, false);
    assert.is(inst.thresholdBytes, 1 * MB);
    assert.equal(events, [], 'nothing to tell while there is space');

    fs.fill(0.4 * MB);
    await waitFor('daemon:disk-low', () => events.length > 0, 10_000);
    await moreChecks(5);
    assert.equal(
      events.map((x) => x.type),
      ['low'],
      'one low event, however many checks',
    );
    const low = events[0]?.e;
    assert.is(low?.holds, 'instances');
    assert.match(
      low?.message ?? '',
      new RegExp(
        `^instances on ${fs.path}: \\d+ kB free of 4(\\.\\d)? MB \\(\\d+(\\.\\d)? %\\), below the 1 MB threshold$`,
      ),
    );
    assert.ok(w.readings().find((r) => r.holds === 'instances')?.low, 'the reading is low');
    assert.not.ok(w.readings().find((r) => r.holds === 'working folder')?.low, 'the other file system is not');

    fs.release();
    await waitFor('daemon:disk-recovered', () => events.length > 1, 10_000);
    await moreChecks(5);
    assert.equal(
      events.map((x) => x.type),
      ['low', 'recovered'],
    );
    assert.match(events[1]?.e.message ?? '', /, above the 1 MB threshold$/);
  } finally {
    w.stop();
  }
});

test('watch :: folders on one file system are one reading', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const work = join(fs.path, 'work');
  await mkdir(work);
  const { w } = watch([
    { holds: 'instances', path: join(fs.path, 'instances') },
    { holds: 'working folder', path: work },
  ]);
  try {
    await w.settled();
    const readings = w.readings();
    assert.is(readings.length, 1);
    assert.is(readings[0]?.holds, 'instances and working folder');
  } finally {
    w.stop();
  }
});

test('watch :: a removed folder is a reading with its error, said once, and the watch goes on', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const instances = join(fs.path, 'instances');
  const { w, log, moreChecks } = watch([{ holds: 'instances', path: instances }]);
  try {
    await w.settled();
    await rm(instances, { recursive: true });
    await moreChecks(5);
    const r = w.readings()[0];
    assert.ok(r?.error, 'the reading carries the error');
    assert.match(r?.error ?? '', /ENOENT/);
    assert.is(r?.low, false);
    const warned = log.lines.filter((l) => l.level === 'warn' && l.msg.startsWith('cannot read the disk space'));
    assert.is(warned.length, 1, 'said once');
    await mkdir(instances);
    await moreChecks(3);
    assert.is(w.readings()[0]?.error, null, 'read again once it is back');
  } finally {
    w.stop();
  }
});

s.run();
