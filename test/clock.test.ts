import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { pollFirstClock } from '../src/clock.ts';
import { tempSuite, waitFor } from './_support/env.ts';

const test = tempSuite('clock', { prefix: 'wd-clock-' });

/** Blocks this thread (as a starved host or a long pause does) until `file` exists and `atLeastMs` have passed. */
function stall(file: string, atLeastMs: number): void {
  const from = performance.now();
  const deadline = from + 20_000;
  while (performance.now() < deadline && (!existsSync(file) || performance.now() - from < atLeastMs)) {
    // Busy on purpose: the event loop must not turn.
  }
  assert.ok(existsSync(file), 'the client never sent its request');
}

test('clock :: after a stall, a request that waited on a new connection is read before a timer that came due', async ({
  dir,
}) => {
  const order: string[] = [];
  const server = createServer((_req, res) => {
    order.push('request');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sent = join(dir, 'sent');
  // A fresh connection, as a game server's check-in may be: the kernel completes it and holds the request while
  // this process is stalled; the marker says the request left the client.
  const client = spawn(process.execPath, [
    '-e',
    `const s = require('node:net').connect(${port}, '127.0.0.1', () => s.write('POST /ping HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 0\\r\\n\\r\\n', () => require('node:fs').writeFileSync(${JSON.stringify(sent)}, '')));
     s.on('data', () => s.end()); setTimeout(() => process.exit(1), 20000).unref();`,
  ]);
  try {
    pollFirstClock.setTimeout(() => order.push('chart timer'), 20);
    // The same delay on a plain timer: what the charts' delays did before, and the proof the stall is real.
    setTimeout(() => order.push('plain timer'), 20);
    stall(sent, 100);
    await waitFor('the chart timer', () => order.includes('chart timer') && order.includes('request'));
    assert.equal(order, ['plain timer', 'request', 'chart timer']);
  } finally {
    client.kill();
    server.close();
  }
});

test('clock :: a cleared timer never fires, whether cleared before it came due or in the turns after', async () => {
  const fired: string[] = [];
  const early = pollFirstClock.setTimeout(() => fired.push('early'), 30);
  pollFirstClock.clearTimeout(early);
  const late = pollFirstClock.setTimeout(() => fired.push('late'), 0);
  // Made after it and both due by the end of the stall, so it runs right after that timeout, before its turns.
  setTimeout(() => pollFirstClock.clearTimeout(late), 0);
  const until = performance.now() + 10;
  while (performance.now() < until) {
    // Both timers come due.
  }
  const kept = pollFirstClock.setTimeout(() => fired.push('kept'), 40);
  await waitFor('the kept timer', () => fired.includes('kept'));
  assert.equal(fired, ['kept']);
  pollFirstClock.clearTimeout(kept);
});

test.run();
