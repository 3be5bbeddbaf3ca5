import { basename } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { portBindsFree, portHolders, socketInodes } from '../../src/process/port-holders.ts';
import { holdPort, release } from '../_support/port-holder.ts';

const test = suite('process :: port holders');

/** What /proc/<pid>/comm shows for a node process: its program's name, cut to 15 bytes. */
const NODE_NAME = basename(process.execPath).slice(0, 15);

test('port-holders :: a TCP listener is found by pid and name', async () => {
  const h = await holdPort('tcp');
  try {
    const found = await portHolders(h.port);
    assert.equal(found, [{ pid: h.pid, name: NODE_NAME, proto: 'tcp' }]);
  } finally {
    await release(h.child);
  }
  assert.equal(await portHolders(h.port), [], 'nothing once it has exited');
});

test('port-holders :: a bound UDP socket is found too', async () => {
  const h = await holdPort('udp');
  try {
    assert.equal(await portHolders(h.port), [{ pid: h.pid, name: NODE_NAME, proto: 'udp' }]);
  } finally {
    await release(h.child);
  }
});

test('portBindsFree :: false while a TCP listener or a UDP socket holds the port, true once it is let go', async () => {
  for (const proto of ['tcp', 'udp'] as const) {
    const h = await holdPort(proto);
    try {
      assert.is(await portBindsFree(h.port), false, `held over ${proto}`);
    } finally {
      await release(h.child);
    }
    assert.is(await portBindsFree(h.port), true, `free once the ${proto} holder has exited`);
  }
});

test('socketInodes :: TCP counts only listeners, UDP every bound socket, the port read as hex', () => {
  const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
  const row = (local: string, st: string, inode: string) =>
    `   0: ${local} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000`;
  const table = [
    header,
    row('0100007F:04BC', '0A', '111'), // 127.0.0.1:1212 listening
    row('0100007F:04BC', '01', '222'), // an established connection on 1212
    row('0100007F:04BD', '0A', '333'), // 1213
    row('00000000:04BC', '07', '0'), // no inode: skipped
  ].join('\n');
  assert.equal(socketInodes(table, 1212, 'tcp'), ['111']);
  assert.equal(socketInodes(table, 1212, 'udp'), ['111', '222']);
  assert.equal(socketInodes(table, 80, 'tcp'), []);
});

test.run();
