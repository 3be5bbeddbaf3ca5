/** Server output echoed into the daemon's log (src/supervisor/server-log.ts): one timestamp per line, the daemon's. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { echoServerLine, withoutLeadingTimestamp } from '../../src/supervisor/server-log.ts';
import { recordingLogger } from '../http/_support/app.ts';

const test = suite('supervisor :: server lines in the daemon log');

test('server-echo :: a timestamp the server put first is dropped; anything else is kept as written', () => {
  const cases: Array<[string, string]> = [
    ['2026-11-28T00:07:53.531Z INFO  [demo] round 1 started', 'INFO  [demo] round 1 started'],
    ['[2026-11-28 00:07:53,531] WARN low tick rate', 'WARN low tick rate'],
    ['2026-11-28T00:07:53+01:00 ready', 'ready'],
    ['[INFO] statushost.http: GET /status from 127.0.0.1', '[INFO] statushost.http: GET /status from 127.0.0.1'],
    ['round ended at 2026-11-28T00:07:53Z', 'round ended at 2026-11-28T00:07:53Z'],
    ['2026-11-28T00:07:53Z', '2026-11-28T00:07:53Z'],
    ['2026-11-28 is the date', '2026-11-28 is the date'],
  ];
  for (const [line, shown] of cases) assert.is(withoutLeadingTimestamp(line), shown, line);
});

test('server-echo :: echoServerLine: the bus gets the line as the server wrote it, the log without its timestamp', () => {
  const bus = createBus();
  const seen: string[] = [];
  bus.on('instance:log', (e) => seen.push(`${e.key} ${e.stream} ${e.line}`));
  const log = recordingLogger('demo:server');
  echoServerLine(bus, log, 'demo', 'stdout', '2026-11-28T00:07:53.531Z INFO  [demo] ready');
  echoServerLine(bus, log, 'demo', 'stderr', '2026-11-28T00:07:54.000Z oops');
  assert.equal(seen, [
    'demo stdout 2026-11-28T00:07:53.531Z INFO  [demo] ready',
    'demo stderr 2026-11-28T00:07:54.000Z oops',
  ]);
  assert.equal(log.lines, ['info [demo:server] INFO  [demo] ready {}', 'warn [demo:server] oops {}']);
});

test.run();
