import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createEntryPool } from '../../../src/updates/archive/entry-pool.ts';

/** A write that finishes when the test says so, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return {
    write: () => {
      log.push(`start ${name}`);
      return done.then(() => void log.push(`end ${name}`));
    },
    open: () => open(),
    fail: (message: string) => fail(new Error(message)),
  };
}

type Gate = ReturnType<typeof gate>;

/** The log, a pool of `limit` places, and a gate per name writing to that log. */
function pooled<N extends string[]>(limit: number, ...names: N) {
  const log: string[] = [];
  const gates = names.map((name) => gate(log, name)) as { [K in keyof N]: Gate };
  return [log, createEntryPool(limit), ...gates] as const;
}

const tick = () => new Promise<void>((r) => setImmediate(r));

const test = suite('entry pool');

test('entry pool :: files with distinct names run side by side up to the limit', async () => {
  const [log, pool, a, b, c] = pooled(2, 'a', 'b', 'c');
  await pool.run('a', a.write);
  await pool.run('b', b.write);
  const third = pool.run('c', c.write);
  await tick();
  assert.equal(log, ['start a', 'start b'], 'the third waits for a free place');
  b.open();
  await third;
  assert.equal(log, ['start a', 'start b', 'end b', 'start c']);
  a.open();
  c.open();
  await pool.finish();
});

test('entry pool :: a write alone (folder, link) waits for everything before it, and what follows waits for it', async () => {
  const [log, pool, a, link, b] = pooled(4, 'a', 'link', 'b');
  await pool.run('a', a.write);
  const alone = pool.run(null, link.write);
  await tick();
  assert.equal(log, ['start a']);
  a.open();
  await tick();
  await tick();
  assert.equal(log, ['start a', 'end a', 'start link']);
  const after = pool.run('b', b.write);
  await tick();
  assert.equal(log, ['start a', 'end a', 'start link'], 'nothing starts beside it');
  link.open();
  await alone;
  await after;
  assert.equal(log.at(-1), 'start b');
  b.open();
  await pool.finish();
});

test('entry pool :: a name already being written waits (a later entry of the same name replaces it in order)', async () => {
  const [log, pool, first, second] = pooled(4, 'x#1', 'x#2');
  await pool.run('x', first.write);
  const next = pool.run('x', second.write);
  await tick();
  assert.equal(log, ['start x#1']);
  first.open();
  await next;
  assert.equal(log, ['start x#1', 'end x#1', 'start x#2']);
  second.open();
  await pool.finish();
});

test('entry pool :: a failure stops what follows: the next run and finish throw it, idle does not', async () => {
  const [log, pool, a, b] = pooled(4, 'a', 'b');
  await pool.run('a', a.write);
  await pool.run('b', b.write);
  a.fail('disk full');
  await tick();
  let thrown: unknown;
  await pool.run('c', async () => void log.push('start c')).catch((err: unknown) => (thrown = err));
  assert.instance(thrown, Error);
  assert.is((thrown as Error).message, 'disk full');
  assert.not.ok(log.includes('start c'), 'nothing starts after a failure');
  const idle = pool.idle();
  b.open();
  await idle;
  try {
    await pool.finish();
    assert.unreachable('finish rethrows');
  } catch (err) {
    assert.is((err as Error).message, 'disk full');
  }
});

test.run();
