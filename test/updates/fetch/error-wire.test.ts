import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { fromWire, toWire } from '../../../src/updates/fetch/error-wire.ts';
import { asDiskFull, DiskSpaceError } from '../../../src/updates/install/disk-guard.ts';

const test = suite('error-wire');

/** Through a real structured clone, as a worker's message crosses. */
function across(err: unknown): Error {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(toWire(err));
  const got = receiveMessageOnPort(port2);
  port1.close();
  if (!got) throw new Error('no message crossed');
  return fromWire(got.message);
}

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

test('error-wire :: a DiskSpaceError keeps its class, reason, message and its system cause', async () => {
  const got = across(new DiskSpaceError('full', 'disk full while extracting', { cause: enospc() }));
  assert.instance(got, DiskSpaceError);
  assert.is((got as DiskSpaceError).reason, 'full');
  assert.is(got.message, 'disk full while extracting');
  assert.is((got.cause as NodeJS.ErrnoException).code, 'ENOSPC');
  assert.match(got.stack ?? '', /error-wire\.test\.ts/);
});

test('error-wire :: a full disk deep in the causes is still told as one on this side', async () => {
  const wrapped = new UpdateError('the tar archive is corrupt or unreadable (write failed)', { cause: enospc() });
  const got = across(wrapped);
  assert.instance(got, UpdateError);
  assert.not.instance(got, DiskSpaceError);
  const full = await asDiskFull(got, process.cwd(), 'extracting');
  assert.instance(full, DiskSpaceError);
  assert.match(full?.message ?? '', /^disk full/);
});

test('error-wire :: a plain error keeps its name; a thrown non-error becomes its text', () => {
  const got = across(new TypeError('bad'));
  assert.is(got.name, 'TypeError');
  assert.is(got.message, 'bad');
  assert.is(across('just text').message, 'just text');
});

test('error-wire :: a chain of causes that loops ends after a few links', () => {
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  a.cause = b;
  let depth = 0;
  for (let e: unknown = across(a); e instanceof Error; e = e.cause) depth++;
  assert.ok(depth > 2 && depth <= 10, `depth ${depth}`);
});

test.run();
