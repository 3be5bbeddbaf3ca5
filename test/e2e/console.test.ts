/**
 * The server console end to end: the real daemon, the console-echo fixture (answers each stdin line with
 * `console: <line>`), `watchdog console`, the dashboard's route and the audit log; the console survives a daemon
 * restart with PersistServers (the adopted server keeps reading the same FIFO).
 */

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cliEnv, runMain, WATCHDOG } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { basic, type RunningDaemon, startDaemon, waitState } from '../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../_support/env.ts';
import { killGroup } from '../_support/procs.ts';

const test = suite('e2e :: the server console');
const TOKEN = 'tok';
const ECHO = join(ROOT, 'test/fixtures/servers/console-echo.mjs');

/** `watchdog <args>` with `input` piped to its standard input; killed after 30 s so a hang fails the test. */
function interactive(
  args: string[],
  input: string,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [WATCHDOG, ...args], { cwd, env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  proc.stdin.end(input);
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const post = (d: RunningDaemon, path: string, body: string, headers: Record<string, string>) =>
  fetch(`${d.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

test('console :: watchdog console sends a command and prints the answer, before and after a daemon restart (PersistServers)', async () => {
  const dir = await tempDir('wd-console-');
  // A fixed address: a server left running checks in to the address it was launched with.
  const daemonPort = await freePort();
  const yaml = testConfig({
    persist: true,
    instances: [
      { key: 'con', port: await freePort(), runCommand: ECHO, extra: '      Console: { CommandsPerMinute: 4 }' },
      { key: 'off', port: await freePort(), runCommand: ECHO },
    ],
  }).replace('Urls: http://127.0.0.1:0', `Urls: http://127.0.0.1:${daemonPort}`);
  let d: RunningDaemon | null = null;
  const servers = new Set<number>();
  try {
    d = await startDaemon(yaml, { dir: dir.path });
    const first = await waitState(d, 'con', TOKEN, 'server.running');
    if (first.pid !== null) servers.add(first.pid);
    const off = await waitState(d, 'off', TOKEN, 'server.running');
    if (off.pid !== null) servers.add(off.pid);

    const sent = await runMain(['console', 'con', 'hello', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, 'console: hello');

    // Refused: the console off, a newline, no body; each answered with the reason and audited.
    const refusedOff = await runMain(['console', 'off', 'hello', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(refusedOff.code, 1);
    assert.match(refusedOff.stderr, 'the console is off for instance off');
    const auth = { authorization: basic('con', TOKEN) };
    const newline = await post(d, '/instances/con/console', JSON.stringify({ command: 'a\nquit' }), auth);
    assert.is(newline.status, 400);
    assert.match(((await newline.json()) as { error: string }).error, 'newline');
    const junk = await post(d, '/instances/con/console', 'not json', auth);
    assert.is(junk.status, 400);
    const big = await post(d, '/instances/con/console', JSON.stringify({ command: 'x'.repeat(10_000) }), auth);
    assert.is(big.status, 413);
    const wrong = await post(d, '/instances/con/console', JSON.stringify({ command: 'x' }), {
      authorization: basic('con', 'nope'),
    });
    assert.is(wrong.status, 401);

    // The dashboard's route: the header is required; then answered as the token route.
    const noHeader = await post(d, '/api/instances/con/console', JSON.stringify({ command: 'from dash' }), {});
    assert.is(noHeader.status, 403);
    const dash = await post(d, '/api/instances/con/console', JSON.stringify({ command: 'from dash' }), {
      'x-watchdog-dashboard': '1',
    });
    assert.is(dash.status, 200, await dash.clone().text());
    assert.equal(await dash.json(), { sent: true });

    // CommandsPerMinute: 4 per caller: hello (CLI) and three more over the token route, then refused.
    for (const n of [1, 2, 3]) {
      const r = await post(d, '/instances/con/console', JSON.stringify({ command: `n${n}` }), auth);
      assert.is(r.status, 200, `command ${n}`);
    }
    const over = await post(d, '/instances/con/console', JSON.stringify({ command: 'n4' }), auth);
    assert.is(over.status, 429);
    assert.match(((await over.json()) as { error: string }).error, 'more than 4 console commands a minute');

    const serverLog = () => readFile(join(dir.path, 'instances/con/logs/server.log'), 'utf8');
    const answered = ['console: hello', 'console: from dash', 'console: n1', 'console: n2', 'console: n3'];
    const log = await waitFor('the answers in server.log', async () => {
      const text = await serverLog();
      return answered.every((line) => text.includes(line)) ? text : undefined;
    });
    assert.not.match(log, 'console: n4');
    assert.not.match(log, 'console: quit');

    // The daemon goes; the server stays (PersistServers) and is adopted by the next daemon, console and all.
    assert.is(await d.stop(), 0);
    d = await startDaemon(yaml, { dir: dir.path });
    const adopted = await waitState(d, 'con', TOKEN, 'server.running');
    assert.is(adopted.pid, first.pid, 'the same server, adopted');
    const again = await runMain(['console', 'con', 'again', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(again.code, 0, again.stderr);
    assert.match(again.stdout, 'console: again');
    assert.not.match(await serverLog(), 'end of input');

    // The prompt, fed through a pipe: each line sent, the output shown, and the last answer waited for at the end.
    const prompt = await interactive(['console', 'con', '--url', d.url, '--token', TOKEN], 'one\ntwo\n', dir.path);
    assert.is(prompt.code, 0, prompt.stderr);
    assert.match(prompt.stdout, 'console: one');
    assert.match(prompt.stdout, 'console: two');

    // No server reading the console (the instance stopped): 409 at once, never a request left hanging.
    assert.is(await d.control('con', TOKEN, 'stop'), 200);
    await waitState(d, 'con', TOKEN, 'stopped.idle');
    const stopped = await post(d, '/instances/con/console', JSON.stringify({ command: 'anyone there' }), auth);
    assert.is(stopped.status, 409);
    assert.match(((await stopped.json()) as { error: string }).error, 'the server has no console open');

    const audit = (await readFile(join(dir.path, 'logs/audit.log'), 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean);
    const lines = audit.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.action === 'console');
    const seen = (command: string, status: number) =>
      lines.some((l) => l.command === command && l.status === status && typeof l.user === 'string');
    assert.ok(seen('hello', 200), 'the sent command is audited with who sent it');
    assert.ok(seen('a\nquit', 400), 'the refused newline too');
    assert.ok(seen('n4', 429), 'and the one over the rate');
    assert.ok(
      lines.some((l) => l.key === 'off' && l.status === 403),
      'and the one to an instance with the console off',
    );
  } finally {
    for (const s of ['con', 'off']) {
      const pid = d
        ? await d
            .status(s, TOKEN)
            .then((st) => st.pid)
            .catch(() => null)
        : null;
      if (pid !== null) servers.add(pid);
    }
    await d?.stop();
    for (const pid of servers) killGroup(pid);
    await dir.cleanup();
  }
});

test.run();
