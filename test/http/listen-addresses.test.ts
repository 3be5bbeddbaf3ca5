import { createServer } from 'node:http';
import { Hono } from 'hono';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ListenAddress } from '../../src/config/listen.ts';
import { checkinBaseUrl, reachesUs } from '../../src/daemon/checkin-address.ts';
import { type BoundAddress, startHttpServers } from '../../src/http/server.ts';

const app = new Hono().get('/health', (c) => c.json({ pid: process.pid }));

/** Whether this host can bind ::1 at all (some CI containers have no IPv6). */
function hasIpv6Loopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(0, '::1', () => s.close(() => resolve(true)));
  });
}

/** Binds `addresses` with the test app, runs `fn` on them, and closes them however `fn` ends; the addresses bound. */
async function whileBound(
  addresses: ListenAddress[],
  fn: (bound: BoundAddress[]) => Promise<void>,
): Promise<BoundAddress[]> {
  const http = await startHttpServers(app, addresses);
  try {
    await fn(http.bound);
  } finally {
    await http.close();
  }
  return http.bound;
}

/** The status GET /health answers with at `url` (a base URL, an IPv6 host in brackets). */
const health = async (url: string) => (await fetch(`${url}/health`)).status;

const servers = suite('http :: every address of Urls is bound');

servers('listen-addresses :: two addresses: both answer, both close', async () => {
  const loopback = { host: '127.0.0.1', port: 0 };
  const bound = await whileBound([loopback, loopback], async (bound) => {
    assert.is(bound.length, 2);
    assert.is.not(bound[0]?.port, bound[1]?.port);
    for (const b of bound) {
      const res = await fetch(`${b.url}/health`);
      assert.equal(await res.json(), { pid: process.pid }, b.url);
    }
  });
  for (const b of bound) {
    const refused = await health(b.url).then(
      () => false,
      () => true,
    );
    assert.ok(refused, `${b.url} closed`);
  }
});

servers(
  'listen-addresses :: localhost binds 127.0.0.1 and, where the host has IPv6, ::1 on the same port',
  async () => {
    await whileBound([{ host: 'localhost', port: 0 }], async (bound) => {
      const [v4, v6] = bound;
      assert.is(v4?.host, '127.0.0.1');
      assert.is(v4?.name, 'localhost');
      if (await hasIpv6Loopback()) {
        assert.is(v6?.host, '::1');
        assert.is(v6?.port, v4?.port, 'the same port on both loopbacks');
        assert.is(await health(`http://[::1]:${v6?.port}`), 200);
      } else {
        assert.is(bound.length, 1, 'no ::1 where the host has no IPv6');
      }
      assert.is(await health(`http://127.0.0.1:${v4?.port}`), 200);
    });
  },
);

servers(
  'listen-addresses :: * binds every interface of both families (:: dual-stack), or every IPv4 one without IPv6',
  async () => {
    await whileBound([{ host: '*', port: 0 }], async (bound) => {
      assert.is(bound.length, 1);
      const only = bound[0];
      assert.is(only?.name, '*');
      assert.is(await health(`http://127.0.0.1:${only?.port}`), 200, 'IPv4 loopback');
      if (await hasIpv6Loopback()) {
        assert.is(only?.host, '::');
        assert.is(await health(`http://[::1]:${only?.port}`), 200, 'IPv6 loopback');
      } else assert.is(only?.host, '0.0.0.0');
    });
  },
);

servers(
  'listen-addresses :: an address that cannot be bound fails the start and closes the ones already bound',
  async () => {
    const first = await startHttpServers(app, [{ host: '127.0.0.1', port: 0 }]);
    const taken = first.bound[0]?.port ?? 0;
    let err: unknown;
    try {
      await startHttpServers(app, [
        { host: '127.0.0.1', port: 0 },
        { host: '127.0.0.1', port: taken },
      ]);
    } catch (e) {
      err = e;
    } finally {
      await first.close();
    }
    assert.instance(err, Error);
    assert.match((err as Error).message, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${taken}: .*EADDRINUSE`));
  },
);

servers.run();

// ---

const address = suite('daemon :: where servers check in');
const bound = (name: string, host: string, port: number): BoundAddress => ({
  name,
  host,
  port,
  url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
});

address(
  'listen-addresses :: a loopback address the daemon bound, spelt as Kestrel reports it, never a public one',
  () => {
    assert.is(
      checkinBaseUrl([bound('localhost', '127.0.0.1', 5000), bound('localhost', '::1', 5000)]),
      'http://localhost:5000',
    );
    assert.is(
      checkinBaseUrl([bound('10.0.0.5', '10.0.0.5', 5001), bound('127.0.0.1', '127.0.0.1', 5002)]),
      'http://127.0.0.1:5002',
    );
    assert.is(checkinBaseUrl([bound('0.0.0.0', '0.0.0.0', 5003)]), 'http://127.0.0.1:5003');
    assert.is(checkinBaseUrl([bound('*', '::', 5004)]), 'http://127.0.0.1:5004', 'dual-stack :: takes IPv4');
    assert.is(checkinBaseUrl([bound('::1', '::1', 5006)]), 'http://[::1]:5006');
    assert.is(
      checkinBaseUrl([bound('10.0.0.5', '10.0.0.5', 5005)]),
      'http://10.0.0.5:5005',
      'no loopback bound: where it listens',
    );
    assert.throws(() => checkinBaseUrl([]), /listens nowhere/);
  },
);

address('listen-addresses :: a recorded check-in address reaches us when a socket we bound answers it', () => {
  const local = [bound('localhost', '127.0.0.1', 5000)];
  assert.ok(reachesUs('http://localhost:5000', local), "the real watchdog's spelling");
  assert.ok(reachesUs('http://localhost:5000/', local));
  assert.ok(reachesUs('http://127.0.0.1:5000', local));
  assert.not.ok(reachesUs('http://127.0.0.1:5001', local), 'another port');
  assert.not.ok(reachesUs('https://localhost:5000', local), 'https is never us');
  assert.not.ok(reachesUs('http://[::1]:5000', local), '::1 not bound');
  assert.not.ok(reachesUs('not a url', local));
  const any = [bound('0.0.0.0', '0.0.0.0', 6000)];
  assert.ok(reachesUs('http://localhost:6000', any));
  assert.ok(reachesUs('http://192.0.2.7:6000', any), 'an IPv4 address of this host reaches 0.0.0.0');
  assert.not.ok(reachesUs('http://watchdog.example.invalid:6000', any), 'a name we cannot vouch for');
});

address.run();
