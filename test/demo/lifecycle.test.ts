import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { validateInfo } from '../../src/kit/schemas.ts';
import { exitWithin, post, startDemo, udpPlayer } from '../_support/demo.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';

const TOKEN = { ROBUST_CVAR_watchdog__token: 'tok' };
const statusOf = async (base: string) =>
  (await (await fetch(`${base}/status`)).json()) as { players: number; round_id: number; name: string };

const exits = suite('demo :: how it ends');

exits('lifecycle :: POST /shutdown → 200, logs the reason, exits 0 at once', async () => {
  const demo = await startDemo([], { env: TOKEN });
  try {
    const r = await post(`${demo.base}/shutdown`, { WatchdogToken: 'tok' }, '{"Reason":"Watchdog shutting down."}');
    assert.equal(r, { status: 200, text: 'Success' });
    assert.equal(await exitWithin(demo), { code: 0, signal: null });
    assert.match(demo.output(), /Watchdog shutting down\., shutting down\.\.\./);
  } finally {
    await demo.kill();
  }
});

exits('lifecycle :: POST /update with no players → 200 and exits 0 at once', async () => {
  const demo = await startDemo(['--cvar', 'game.round_length=600'], { env: TOKEN });
  try {
    assert.is((await post(`${demo.base}/update`, { WatchdogToken: 'tok' })).status, 200);
    assert.equal(await exitWithin(demo), { code: 0, signal: null });
    assert.match(demo.output(), /update received \(UpdateAvailable\)/);
    assert.match(demo.output(), /no players; restarting for the update now/);
  } finally {
    await demo.kill();
  }
});

exits('lifecycle :: POST /update with a player → waits for the round end, records it, exits 0', async () => {
  const dir = await tempDir('wd-demo-');
  const demo = await startDemo(['--cvar', 'game.round_length=1.5', '--data-dir', join(dir.path, 'data')], {
    env: TOKEN,
    cwd: dir.path,
  });
  const player = await udpPlayer(demo.port);
  try {
    assert.is(await player.send('join bob'), 'welcome bob'); // the 30 s player timeout outlasts the round
    assert.is((await post(`${demo.base}/update`, { WatchdogToken: 'tok' })).status, 200);
    assert.is(demo.exit(), undefined, 'not at once');
    assert.equal(await exitWithin(demo), { code: 0, signal: null });
    assert.match(demo.output(), /round over; restarting for the update/);
    const doc = JSON.parse(await readFile(join(dir.path, 'data', 'rounds.json'), 'utf8')) as {
      rounds: Array<{ id: number; players: number }>;
    };
    assert.ok(doc.rounds.length >= 1);
    assert.is(doc.rounds.at(-1)?.players, 1);
    assert.equal(await readdir(dir.path), ['data'], 'writes only inside --data-dir');
    assert.equal(await readdir(join(dir.path, 'data')), ['rounds.json']);
  } finally {
    await player.close();
    await demo.kill();
    await dir.cleanup();
  }
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  exits(`lifecycle :: ${signal} → exits 0 cleanly`, async () => {
    const demo = await startDemo();
    try {
      process.kill(demo.pid, signal);
      assert.equal(await exitWithin(demo), { code: 0, signal: null });
      assert.match(demo.output(), new RegExp(`stopping: received ${signal}`));
    } finally {
      await demo.kill();
    }
  });
}

exits('lifecycle :: demo.crash_after → exit code 3', async () => {
  const demo = await startDemo(['--cvar', 'demo.crash_after=0.3']);
  try {
    assert.equal(await exitWithin(demo), { code: 3, signal: null });
    assert.match(demo.output(), /crashing on purpose/);
  } finally {
    await demo.kill();
  }
});

exits('lifecycle :: a malformed --cvar → exit 2 with a clear message', async () => {
  const demo = await startDemo(['--cvar', 'game.hostname'], { ready: null });
  try {
    assert.equal(await exitWithin(demo), { code: 2, signal: null });
    assert.match(demo.output(), /--cvar: expected name=value but got "game.hostname"/);
  } finally {
    await demo.kill();
  }
});

exits('lifecycle :: the port already taken → exit 1 naming the problem', async () => {
  const port = await freePort();
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
  const demo = await startDemo([], { port, ready: null });
  try {
    assert.equal(await exitWithin(demo), { code: 1, signal: null });
    assert.match(demo.output(), /EADDRINUSE.*another server uses this port/);
  } finally {
    await demo.kill();
    await new Promise<void>((r) => blocker.close(() => r()));
  }
});
exits.run();

// ---
const game = suite('demo :: players, rounds and settings');

game('lifecycle :: players join, ping, leave and time out over UDP; /status counts them', async () => {
  const demo = await startDemo(['--cvar', 'demo.player_timeout=0.6']);
  const a = await udpPlayer(demo.port);
  const b = await udpPlayer(demo.port);
  try {
    assert.is(await a.send('join alice'), 'welcome alice');
    assert.is(await b.send('join bob'), 'welcome bob');
    assert.is(await a.send('join alice2'), 'welcome alice2', 'rejoin renames');
    assert.is(await a.send('ping'), 'pong 2');
    assert.is((await statusOf(demo.base)).players, 2);
    assert.is(await a.send('leave'), 'bye');
    assert.is((await statusOf(demo.base)).players, 1);
    assert.match(await a.send('dance'), /^error unknown command "dance"/);
    assert.match(await a.send('join'), /^error join needs a name/);
    await waitFor('bob to time out', async () => (await statusOf(demo.base)).players === 0);
    assert.match(demo.output(), /player timed out: bob/);
  } finally {
    await a.close();
    await b.close();
    await demo.kill();
  }
});

game('lifecycle :: config.toml and cvars feed /status and /info; round ids continue from rounds.json', async () => {
  const dir = await tempDir('wd-demo-');
  const config = join(dir.path, 'config.toml');
  await writeFile(
    config,
    [
      '[game]',
      'hostname = "[RU] From config"',
      'desc = "Configured"',
      'soft_max_players = 50',
      '[hub]',
      'tags = "region:eu_e, lang:ru"',
      '[auth]',
      'mode = "Optional"',
      '[status]',
      'connectaddress = "udp://play.example:1212/"',
      'privacy_policy_link = "https://example.com/privacy"',
      'privacy_policy_identifier = "example"',
      'privacy_policy_version = "3"',
      '[[status.links]]',
      'name = "Wiki"',
      'icon = "wiki"',
      'url = "https://wiki.example"',
      '[[status.links]]',
      'name = "Site"',
      'url = "https://example.com"',
    ].join('\n'),
  );
  const dataDir = join(dir.path, 'data');
  await mkdir(dataDir);
  await writeFile(
    join(dataDir, 'rounds.json'),
    JSON.stringify({ rounds: [{ id: 41, startedAt: 'x', endedAt: 'y', players: 0 }] }),
  );
  const demo = await startDemo(['--config-file', config, '--data-dir', dataDir, '--cvar', 'game.desc=From argv'], {
    cwd: dir.path,
  });
  try {
    const status = await statusOf(demo.base);
    assert.is(status.name, '[RU] From config');
    assert.is(status.round_id, 42);
    const full = (await (await fetch(`${demo.base}/status`)).json()) as Record<string, unknown>;
    assert.equal(full.tags, ['region:eu_e', 'lang:ru']);
    assert.is(full.soft_max_players, 50);
    const info = (await (await fetch(`${demo.base}/info`)).json()) as Record<string, unknown>;
    assert.equal(validateInfo(info).problems, []);
    assert.is(info.desc, 'From argv', 'argv beats the config file');
    assert.is(info.connect_address, 'udp://play.example:1212/');
    assert.is(info.connect_addrees, 'udp://play.example:1212/');
    assert.equal((info.auth as { mode: string }).mode, 'Optional');
    assert.equal(info.links, [
      { name: 'Wiki', icon: 'wiki', url: 'https://wiki.example' },
      { name: 'Site', url: 'https://example.com' },
    ]);
    assert.equal(info.privacy_policy, { link: 'https://example.com/privacy', identifier: 'example', version: '3' });
  } finally {
    await demo.kill();
    await dir.cleanup();
  }
});

game('lifecycle :: status.bind moves the HTTP API; status.enabled=false turns it off', async () => {
  const other = await freePort();
  const moved = await startDemo(['--cvar', `status.bind=127.0.0.1:${other}`]);
  try {
    assert.is((await fetch(`http://127.0.0.1:${other}/status`)).status, 200);
    assert.match(moved.output(), new RegExp(`status api listening on http://127.0.0.1:${other}`));
  } finally {
    await moved.kill();
  }
  const off = await startDemo(['--cvar', 'status.enabled=false'], { ready: /demo server ready/ });
  try {
    assert.match(off.output(), /status api disabled/);
    let refused = false;
    await fetch(`${off.base}/status`).catch(() => (refused = true));
    assert.ok(refused, 'no HTTP listener');
    const p = await udpPlayer(off.port);
    assert.is(await p.send('ping'), 'pong 0', 'the game still runs');
    await p.close();
  } finally {
    await off.kill();
  }
});

game('lifecycle :: rounds follow one another at game.round_length', async () => {
  const demo = await startDemo(['--cvar', 'game.round_length=0.3']);
  try {
    await waitFor('round 3', async () => (await statusOf(demo.base)).round_id >= 3);
    assert.match(demo.output(), /round 1 ended/);
    assert.match(demo.output(), /no --data-dir given/);
  } finally {
    await demo.kill();
  }
});
game('console :: status, players and say, one answer line each; an unknown command names the known ones', async () => {
  const demo = await startDemo([], { env: TOKEN, stdin: 'pipe' });
  const player = await udpPlayer(demo.port);
  try {
    assert.is(await player.send('join carol'), 'welcome carol');
    demo.proc.stdin?.write('status\nplayers\nsay back in five\nfrobnicate\n');
    const answered = await waitFor(
      'four answers',
      () => (demo.output().match(/console> /g) ?? []).length >= 4 || undefined,
    );
    assert.ok(answered);
    assert.match(demo.output(), /console> status: 1 player\(s\), round \d+ \(\d+ s in\)/);
    assert.match(demo.output(), /console> players: carol/);
    assert.match(demo.output(), /console> say back in five: told 1 player\(s\)/);
    assert.is(await player.receive(), 'announce back in five');
    assert.match(
      demo.output(),
      /console> frobnicate: unknown command: frobnicate \(commands: status, players, say <text>, help\)/,
    );
  } finally {
    await player.close();
    await demo.kill();
  }
});

game.run();
