import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../_support/env.ts';

const src = (p: string) => JSON.stringify(pathToFileURL(join(ROOT, 'src', p)).href);

/** A real process: a thrown error and a rejected promise that nothing handles, then proof it still runs. */
const SCRIPT = `
import { guardProcess } from ${src('daemon/fault-guard.ts')};
import { createBus } from ${src('bus.ts')};
import { createLogger } from ${src('log.ts')};
const bus = createBus();
const kinds = [];
bus.on('daemon:fault', (e) => kinds.push(e.kind));
guardProcess(bus, createLogger('watchdog'));
// The faults come from timers, as a daemon's do; the proof of life follows the second fault, a timer later.
setTimeout(() => { throw new Error('boom from a timer'); }, 10);
setTimeout(() => { void Promise.reject(new Error('nobody awaited this')); }, 20);
bus.on('daemon:fault', () => {
  if (kinds.length === 2) setTimeout(() => { console.log('still supervising: ' + kinds.join(',')); }, 0);
});
`;

const test = suite('daemon/fault-guard');

test('fault-guard :: an uncaught exception and an unhandled rejection are logged with their stack; the process goes on', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, 'still supervising: uncaught-exception,unhandled-rejection');
  assert.match(
    run.stderr,
    /ERROR \[watchdog\] unexpected error \(uncaught-exception\), the daemon goes on supervising.*boom from a timer/,
  );
  assert.match(run.stderr, /unexpected error \(unhandled-rejection\).*nobody awaited this/);
  assert.match(run.stderr, /stack="Error: boom from a timer\\n\s+at /, 'with the stack');
});

test.run();
