import * as assert from 'uvu/assert';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { testConfig } from '../../_support/config.ts';
import { freePort } from '../../_support/env.ts';
import { cliSuite, runCli } from '../_run.ts';

const usage = cliSuite('watchdog CLI :: usage errors exit 2 with the usage text', 'wd-cli-usage-');

for (const action of ['restart', 'update', 'stop', 'rollback']) {
  usage(`${action} without a key`, async ({ cwd }) => {
    const r = await runCli([action], { cwd });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `watchdog ${action}: missing the instance key`);
    assert.match(r.stderr, `usage: watchdog ${action} <key>`);
    assert.is(r.stdout, '');
  });
}

usage('logs without a key', async ({ cwd }) => {
  const r = await runCli(['logs', '-f'], { cwd });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, 'usage: watchdog logs <key>');
});

usage('unknown options', async ({ cwd }) => {
  for (const args of [
    ['status', '--bogus'],
    ['restart', 'demo', '--force'],
    ['logs', 'demo', '-x'],
  ]) {
    const r = await runCli(args, { cwd });
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /Unknown option/);
    assert.match(r.stderr, `usage: watchdog ${args[0]}`);
  }
});

usage('bad values and extra arguments', async ({ cwd }) => {
  const cases: [string[], RegExp][] = [
    [['status', 'demo', '--interval', '0'], /--interval: expected a positive number/],
    [['status', 'demo', '--watch', '--count', 'many'], /--count: expected a whole number/],
    [['logs', 'demo', '-n', 'abc'], /-n: expected a whole number/],
    [['logs', 'demo', '-n', '-3'], /ambiguous/],
    [['stop', 'demo', 'other'], /unexpected argument "other"/],
    [['status', 'a', 'b'], /unexpected argument "b"/],
    [['restart', 'demo', '--url'], /argument missing/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args, { cwd });
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

usage.run();

// ---

const down = cliSuite('watchdog CLI :: no daemon answering', 'wd-cli-usage-');

down(
  'restart against a closed port: exit 1, the address and how to start it; the token never printed',
  async ({ cwd }) => {
    const port = await freePort();
    const r = await runCli(['restart', 'demo', '--url', `http://127.0.0.1:${port}/`, '--token', 'sekrit-token-1'], {
      cwd,
    });
    assert.is(r.code, 1);
    assert.is(
      r.stderr,
      `watchdog restart: no watchdog answering at http://127.0.0.1:${port} — is it running? (start it with: watchdog start)\n`,
    );
    assert.is(r.stdout, '');
  },
);

for (const action of ['update', 'rollback']) {
  down(
    `${action} against a closed port: exit 1, the same "no watchdog answering" message; the token never printed`,
    async ({ cwd }) => {
      const port = await freePort();
      const r = await runCli([action, 'demo', '--url', `http://127.0.0.1:${port}`, '--token', 'sekrit-token-3'], {
        cwd,
      });
      assert.is(r.code, 1);
      assert.is(
        r.stderr,
        `watchdog ${action}: no watchdog answering at http://127.0.0.1:${port} — is it running? (start it with: watchdog start)\n`,
      );
      assert.is(r.stdout, '');
    },
  );
}

down('logs does not talk to the daemon: with none answering it still prints the local server.log', async ({ cwd }) => {
  const dir = join(cwd, 'logs-only');
  const logDir = join(dir, 'instances', 'demo', 'logs');
  await mkdir(logDir, { recursive: true });
  // Urls names a port nobody listens on; logs must not try it.
  const yaml = testConfig({ instances: [{ key: 'demo', port: 4203 }] });
  await writeFile(
    join(dir, 'appsettings.yml'),
    yaml.replace('Urls: http://127.0.0.1:0', `Urls: http://*:${await freePort()}`),
  );
  await writeFile(join(logDir, 'server.log'), 'one\ntwo\n');
  const r = await runCli(['logs', 'demo', '-n', '1'], { cwd: dir });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'two\n');
  assert.is(r.stderr, '');
});

down('status with WATCHDOG_TOKEN and no local config at all; localhost tries every address', async ({ cwd }) => {
  const port = await freePort();
  const r = await runCli(['status', 'demo', '--url', `http://localhost:${port}`], {
    cwd,
    env: { WATCHDOG_TOKEN: 'sekrit-token-2' },
  });
  assert.is(r.code, 1);
  assert.is(
    r.stderr,
    `watchdog status: no watchdog answering at http://localhost:${port} — is it running? (start it with: watchdog start)\n`,
  );
  assert.not.match(r.stderr + r.stdout, 'sekrit');
});

down('status --watch keeps trying and stops after --count redraws', async ({ cwd }) => {
  const port = await freePort();
  const r = await runCli(
    [
      'status',
      'demo',
      '--watch',
      '--interval',
      '0.1',
      '--count',
      '3',
      '--url',
      `http://127.0.0.1:${port}`,
      '--token',
      't',
    ],
    { cwd },
  );
  assert.is(r.code, 1);
  assert.is(r.stderr.match(/no watchdog answering/g)?.length, 3, r.stderr);
  assert.is(r.stdout.match(/^KEY/gm)?.length, 3, 'an (empty) table per redraw');
});

down(
  'status of every configured instance: the address from Urls, one message for all, no empty table',
  async ({ cwd }) => {
    const port = await freePort();
    const dir = join(cwd, 'configured');
    await mkdir(dir);
    const yaml = testConfig({
      instances: [
        { key: 'demo', port: 4201 },
        { key: 'beta', port: 4202, token: 'other' },
      ],
    });
    await writeFile(join(dir, 'appsettings.yml'), yaml.replace('Urls: http://127.0.0.1:0', `Urls: http://*:${port}`));
    const r = await runCli(['status'], { cwd: dir });
    assert.is(r.code, 1);
    assert.is(
      r.stderr,
      `watchdog status: no watchdog answering at http://localhost:${port} — is it running? (start it with: watchdog start)\n`,
    );
    assert.is(r.stdout, '');
  },
);

/** Whether something already listens on 127.0.0.1:5000 (then the default-address test cannot say "nobody answers"). */
const port5000Busy = () =>
  new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(true));
    srv.listen(5000, '127.0.0.1', () => srv.close(() => resolve(false)));
  });

down('no --url and no config: http://localhost:5000', async ({ cwd }) => {
  if (await port5000Busy()) {
    console.warn('skipped the default-address check: something listens on 127.0.0.1:5000');
    return;
  }
  const r = await runCli(['stop', 'demo', '--token', 'x'], { cwd });
  assert.is(r.code, 1);
  assert.is(
    r.stderr,
    'watchdog stop: no watchdog answering at http://localhost:5000 — is it running? (start it with: watchdog start)\n',
  );
});

down('no token for the instance anywhere: exit 2 before any request', async ({ cwd }) => {
  const r = await runCli(['restart', 'demo', '--url', 'http://127.0.0.1:9'], { cwd });
  assert.is(r.code, 2);
  assert.match(r.stderr, /watchdog restart: no token for instance demo: pass --token, set WATCHDOG_TOKEN/);
});

down.run();
