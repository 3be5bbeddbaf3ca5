import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { cliSuite, runCli, runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { freePort } from '../../_support/env.ts';

const usage = cliSuite('watchdog CLI :: usage errors exit 2 with the usage text', 'wd-cli-usage-');

// A usage error depends on the arguments alone: main() runs in this process (runMain) but for the first action,
// which goes through the real bin so its exit code and output are the process's own.

for (const action of ['restart', 'update', 'stop', 'rollback']) {
  usage(`usage :: ${action} without a key`, async ({ cwd }) => {
    const r = action === 'restart' ? await runCli([action], { cwd }) : await runMain([action]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `watchdog ${action}: missing the instance key`);
    assert.match(r.stderr, `usage: watchdog ${action} <key>`);
    assert.is(r.stdout, '');
  });
}

usage('usage :: logs without a key', async () => {
  const r = await runMain(['logs', '-f']);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, 'usage: watchdog logs <key>');
});

usage('usage :: unknown options', async () => {
  for (const args of [
    ['status', '--bogus'],
    ['restart', 'demo', '--force'],
    ['logs', 'demo', '-x'],
  ]) {
    const r = await runMain(args);
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /unknown option -/);
    assert.match(r.stderr, `usage: watchdog ${args[0]}`);
  }
});

usage('usage :: bad values and extra arguments', async () => {
  const cases: [string[], RegExp][] = [
    [['status', 'demo', '--interval', '0'], /--interval: expected a positive number/],
    [['status', 'demo', '--watch', '--count', 'many'], /--count: expected a whole number/],
    [['logs', 'demo', '-n', 'abc'], /-n: expected a whole number/],
    [['logs', 'demo', '-n', '-3'], /ambiguous/],
    [['stop', 'demo', 'other'], /unexpected argument "other"/],
    [['status', 'a', 'b'], /unexpected argument "b"/],
    [['restart', 'demo', '--url'], /--url needs a value\n/],
    [['status', 'demo', '--json=yes'], /--json takes no value\n/],
  ];
  for (const [args, message] of cases) {
    const r = await runMain(args);
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

usage('usage :: a mistyped command or option: "did you mean", exit 2, no wall of help', async () => {
  const command = await runMain(['statsu']);
  assert.is(command.code, 2);
  assert.is(
    command.stderr,
    'watchdog: unknown command "statsu" (did you mean "status"?); `watchdog --help` lists the commands\n',
  );
  const far = await runMain(['frobnicate']);
  assert.is(far.code, 2);
  assert.is(far.stderr, 'watchdog: unknown command "frobnicate"; `watchdog --help` lists the commands\n');
  const option = await runMain(['status', '--jsno']);
  assert.is(option.code, 2);
  assert.match(
    option.stderr,
    /^watchdog status: unknown option --jsno \(did you mean "--json"\?\)\nusage: watchdog status/,
  );
  assert.not.match(option.stderr, /positional argument/, "not the parser's advice about positionals");
});

usage(
  'usage :: --url without a scheme is a usage error that shows the fix, before anything is sent',
  async ({ cwd }) => {
    const r = await runMain(['status', 'demo', '--url', 'localhost:5000', '--token', 'sekrit-token-4'], { cwd });
    assert.is(r.code, 2);
    assert.is(
      r.stderr,
      'watchdog status: --url "localhost:5000" is not an http:// or https:// address (did you mean http://localhost:5000?)\n',
    );
    const env = await runMain(['restart', 'demo', '--token', 'sekrit-token-4'], {
      cwd,
      env: { WATCHDOG_URL: 'ftp://x' },
    });
    assert.is(env.code, 2);
    assert.match(env.stderr, 'WATCHDOG_URL "ftp://x" is not an http:// or https:// address\n');
  },
);

usage('usage :: help of stop and rollback: no --when, which only restart and update take', async () => {
  for (const action of ['stop', 'rollback', 'restart', 'update']) {
    const r = await runMain([action, '-h']);
    assert.is(r.code, 0);
    assert.match(r.stdout, `usage: watchdog ${action} <key>`);
    assert.is(/--when/.test(r.stdout), action === 'restart' || action === 'update', action);
  }
});

usage('usage :: every option line of hold and status is described, in one column', async () => {
  for (const command of ['hold', 'status']) {
    const r = await runMain([command, '-h']);
    const [synopsis = '', ...lines] = r.stdout.trimEnd().split('\n');
    for (const flag of synopsis.match(/--[a-z]+/g) ?? [])
      assert.ok(
        lines.some((l) => l.includes(flag)),
        `${command}: ${flag} is described`,
      );
    // An option's description starts in column 16, as in every other command's help.
    for (const line of lines.filter((l) => /^ {2}--[a-z]+ [A-Z]?\s/.test(l) && !l.includes(',')))
      assert.match(line, /^ {2}\S.{11} {1,}\S/, line);
  }
});

usage('usage :: check --config with a missing file says to check that path', async ({ cwd }) => {
  const r = await runMain(['check', '--config', 'nope.yml'], { cwd });
  assert.is(r.code, 2);
  assert.match(r.stderr + r.stdout, `nope.yml not found in ${cwd} (check the path given to --config)`);
});

usage.run();

// ---

const down = cliSuite('watchdog CLI :: no daemon answering', 'wd-cli-usage-');

down(
  'usage :: restart against a closed port: exit 1, the address and how to start it; the token never printed',
  async ({ cwd }) => {
    const port = await freePort();
    const r = await runMain(['restart', 'demo', '--url', `http://127.0.0.1:${port}/`, '--token', 'sekrit-token-1'], {
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
    `usage :: ${action} against a closed port: exit 1, the same "no watchdog answering" message; the token never printed`,
    async ({ cwd }) => {
      const port = await freePort();
      const r = await runMain([action, 'demo', '--url', `http://127.0.0.1:${port}`, '--token', 'sekrit-token-3'], {
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

down(
  'usage :: logs does not talk to the daemon: with none answering it still prints the local server.log',
  async ({ cwd }) => {
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
    const r = await runMain(['logs', 'demo', '-n', '1'], { cwd: dir });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, 'two\n');
    assert.is(r.stderr, '');
  },
);

down(
  'usage :: status with WATCHDOG_TOKEN and no local config at all; localhost tries every address',
  async ({ cwd }) => {
    const port = await freePort();
    const r = await runMain(['status', 'demo', '--url', `http://localhost:${port}`], {
      cwd,
      env: { WATCHDOG_TOKEN: 'sekrit-token-2' },
    });
    assert.is(r.code, 1);
    assert.is(
      r.stderr,
      `watchdog status: no watchdog answering at http://localhost:${port} — is it running? (start it with: watchdog start)\n`,
    );
    assert.not.match(r.stderr + r.stdout, 'sekrit');
  },
);

down('usage :: status --watch keeps trying and stops after --count redraws', async ({ cwd }) => {
  const port = await freePort();
  const r = await runMain(
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
  'usage :: status of every configured instance: the address from Urls, one message for all, no empty table',
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
    const r = await runMain(['status'], { cwd: dir });
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

down('usage :: no --url and no config: http://localhost:5000', async ({ cwd }) => {
  if (await port5000Busy()) {
    console.warn('skipped the default-address check: something listens on 127.0.0.1:5000');
    return;
  }
  const r = await runMain(['stop', 'demo', '--token', 'x'], { cwd });
  assert.is(r.code, 1);
  assert.is(
    r.stderr,
    'watchdog stop: no watchdog answering at http://localhost:5000 — is it running? (start it with: watchdog start)\n',
  );
});

down('usage :: no token for the instance anywhere: exit 2 before any request', async ({ cwd }) => {
  const r = await runMain(['restart', 'demo', '--url', 'http://127.0.0.1:9'], { cwd });
  assert.is(r.code, 2);
  assert.match(r.stderr, /watchdog restart: no token for instance demo: pass --token, set WATCHDOG_TOKEN/);
});

down.run();
