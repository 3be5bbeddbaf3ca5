import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkinSeconds, contractArgv, testConfig } from '../_support/config.ts';
import { waitState, withDaemons } from '../_support/daemon.ts';
import { freePort } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';

const test = suite('e2e :: launch contract');

interface Echo {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

test('launch-contract :: argv, environment and working directory match the contract exactly', () =>
  withDaemons({}, async ({ dir: tmp, start }) => {
    const script = await writeServerScript(join(tmp, 'server.sh'), fixture('echo-env.mjs'));
    const echoFile = join(tmp, 'echo.json');
    const port = await freePort();
    const yaml = testConfig({
      instances: [
        {
          key: 'echo',
          port,
          runCommand: script,
          args: ['--cvar', 'game.hostname=Echo'],
          extra: `      EnvironmentVariables:\n        ECHO_FILE: ${JSON.stringify(echoFile)}\n        CUSTOM_VAR: custom`,
        },
      ],
    });
    const d = await start(yaml);
    const s = await waitState(d, 'echo', 'tok', 'server.running');
    const echo = JSON.parse(await readFile(echoFile, 'utf8')) as Echo;
    const dir = join(tmp, 'instances', 'echo');
    // Where the daemon listens (Urls: http://127.0.0.1:0), spelt as the real watchdog passes Kestrel's address.
    const baseUrl = `http://127.0.0.1:${new URL(d.url).port}`;
    assert.equal(echo.argv, [
      ...contractArgv('echo', baseUrl, dir),
      '--cvar',
      `net.port=${port}`,
      '--cvar',
      `watchdog.checkin_interval=${checkinSeconds()}`,
      '--cvar',
      'game.hostname=Echo',
    ]);
    assert.is(echo.cwd, dir);
    const secret = echo.env.ROBUST_CVAR_watchdog__token ?? '';
    assert.is(Buffer.from(secret, 'base64').length, 64, '64 random bytes, base64');
    assert.is(echo.env.CUSTOM_VAR, 'custom');
    assert.is(echo.env.PATH, process.env.PATH, 'inherits the daemon environment');
    const cmdline = await readFile(`/proc/${s.pid}/cmdline`, 'utf8');
    assert.not.ok(cmdline.includes(secret), 'the secret is never in argv');
    assert.not.match(d.log(), secret.replace(/[+/=]/g, '\\$&'), 'the secret is never logged');
  }));

test.run();
