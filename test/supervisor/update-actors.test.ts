/**
 * The update actors and disk-space failures: providers stage a found build during the check, so a disk
 * that cannot take it fails the check; that must still reach people as a failed update (during: install), while a
 * CDN that is down stays a failed check, told to nobody.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, toPromise } from 'xstate';
import { type BusEvents, createBus } from '../../src/bus.ts';
import type { ResolvedInstance } from '../../src/config/resolved.ts';
import { UpdateError } from '../../src/errors.ts';
import { createCheckActor, createUpdateActor, type UpdateHost } from '../../src/supervisor/update-actors.ts';
import { DiskSpaceError } from '../../src/updates/install/disk-guard.ts';
import type { UpdateProvider } from '../../src/updates/provider.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

/** A host whose provider's check fails with `error`; records the update facts on its bus. */
function hostFailingWith(error: Error) {
  const bus = createBus();
  const updates: Array<BusEvents['instance:update']> = [];
  bus.on('instance:update', (e) => updates.push(e));
  const provider: UpdateProvider = {
    type: 'Manifest',
    check: () => Promise.reject(error),
    apply: () => Promise.reject(new Error('apply must not be reached')),
  };
  const log = recordingLogger();
  const host: UpdateHost = {
    instance: { key: 'alpha' } as ResolvedInstance,
    log,
    bus,
    provider,
    recordRevision: async () => {},
  };
  return { host, updates, log };
}

const short = () =>
  new DiskSpaceError('short', 'not enough disk space on /data: needs 1.3 GB, has 800 MB (the unpacked build)');

const s = suite('update actors :: disk space');

s('check :: a build the disk cannot take is a failed update, and the check finds nothing', async () => {
  const { host, updates, log } = hostFailingWith(new UpdateError('staging failed', { cause: short() }));
  const before = Date.now();
  const out = await toPromise(createActor(createCheckActor(host), { input: { key: 'alpha', revision: 'A' } }).start());
  assert.is(out.available, false);
  assert.ok(out.at.wall >= before, 'stamped with the time it answered');
  assert.is(updates.length, 1);
  assert.is(updates[0]?.phase, 'failed');
  assert.is(updates[0]?.during, 'install');
  assert.match(updates[0]?.error ?? '', /not enough disk space on \/data: needs 1\.3 GB, has 800 MB/);
  assert.ok(
    log.lines.some((l) => l.level === 'error' && l.msg.startsWith('update failed')),
    'logged as an error',
  );
});

s('check :: any other failure stays a failed check (rejects, tells no one)', async () => {
  const { host, updates } = hostFailingWith(new UpdateError('the manifest answered HTTP 500'));
  const actor = createActor(createCheckActor(host), { input: { key: 'alpha', revision: 'A' } });
  const err = await toPromise(actor.start()).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, UpdateError);
  assert.equal(updates, []);
});

s('update :: a disk-space failure in the check is reported as during install', async () => {
  const { host, updates } = hostFailingWith(short());
  const err = await toPromise(
    createActor(createUpdateActor(host), { input: { key: 'alpha', revision: 'A' } }).start(),
  ).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, DiskSpaceError);
  const failed = updates.filter((u) => u.phase === 'failed');
  assert.is(failed.length, 1);
  assert.is(failed[0]?.during, 'install');
});

s('update :: a CDN down at the check stays during check', async () => {
  const { host, updates } = hostFailingWith(new UpdateError('the manifest answered HTTP 500'));
  await toPromise(createActor(createUpdateActor(host), { input: { key: 'alpha', revision: 'A' } }).start()).catch(
    () => undefined,
  );
  assert.is(updates.find((u) => u.phase === 'failed')?.during, 'check');
});

s.run();
