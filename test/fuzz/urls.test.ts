/**
 * Fuzzing `Urls` (src/config/listen.ts `parseUrls`): whatever is written, it is refused with what is expected, or
 * every address it accepts is one the daemon can bind: `localhost`, `*`, an IP address, or a name for the resolver,
 * with a port 0-65535. An accepted address that cannot be bound would pass `watchdog check` and fail
 * only at start, the one thing the configuration check exists to prevent.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseUrls } from '../../src/config/listen.ts';
import { fuzz } from './_support/fuzz.ts';

/**
 * A host `listen()` can take: a keyword, an IP address, or a name for the resolver (which cannot be judged without
 * it), but never brackets around something else nor four numbers that are no IPv4 address.
 */
function bindable(host: string): boolean {
  if (host === 'localhost' || host === '*' || isIP(host) !== 0) return true;
  return !/[[\]]/.test(host) && !/^\d+\.\d+\.\d+\.\d+$/.test(host) && !host.includes(':');
}

const host = fc.oneof(
  fc.constantFrom('localhost', 'LOCALHOST', '*', '+', '0.0.0.0', '127.0.0.1', 'example.com', 'a', 'a-b.c'),
  fc.ipV4().map((ip) => ip),
  fc.ipV6().map((ip) => `[${ip}]`),
  fc.constantFrom('[::::]', '[:]', '[1.2.3.4]', '[::1', '::1', '999.1.1.1', '1.2.3', '-a', 'a..b', 'a_b', 'é', '[]'),
  fc.domain(),
  fc.string({ maxLength: 10 }),
);

const url = fc
  .tuple(
    fc.constantFrom('http://', 'https://', 'HTTP://', 'ftp://', ''),
    host,
    fc.constantFrom(':5000', ':0', ':65535', ':65536', ':00080', ':', '', ':99999'),
    fc.constantFrom('', '/', '//', '/x'),
  )
  .map((parts) => parts.join(''));

const urls = suite('fuzz/Urls');

urls('fuzz/urls :: an accepted Urls names only addresses the daemon can bind', async () => {
  await fuzz(
    'urls/parse',
    fc.property(
      fc.array(url, { minLength: 1, maxLength: 3 }).map((list) => list.join(';')),
      (value) => {
        const r = parseUrls(value);
        if (!r.ok) return assert.match(r.expected, /^expected /);
        for (const a of r.listen) {
          assert.ok(bindable(a.host), `${JSON.stringify(value)} accepted host ${JSON.stringify(a.host)}`);
          assert.ok(Number.isInteger(a.port) && a.port >= 0 && a.port <= 65535, `port ${a.port}`);
        }
      },
    ),
    { seed: 0x0e15_01, numRuns: 3000 },
  );
});

urls.run();
