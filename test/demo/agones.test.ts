import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type FakeAgonesSdk, type FakeAgonesSdkOptions, healthPace, startAgonesSdk } from '../_support/agones-sdk.ts';
import { exitWithin, post, startDemo, udpPlayer } from '../_support/demo.ts';
import { waitFor } from '../_support/env.ts';

const TOKEN = { ROBUST_CVAR_watchdog__token: 'tok' };
/** Health every 0.2 s instead of 2 s, so a second of watching sees several. */
const FAST_HEALTH = ['--cvar', 'agones.health_interval=0.2'];
const playersLabel = 'agones.dev/sdk-players';

const agones = suite('demo :: Agones mode');
// Closed after each test whatever happened in it: an open fake would keep the test process alive.
const opened: FakeAgonesSdk[] = [];
const fakeSdk = async (opts?: FakeAgonesSdkOptions) => {
  const fake = await startAgonesSdk(opts);
  opened.push(fake);
  return fake;
};
agones.after.each(async () => {
  await Promise.all(opened.splice(0).map((f) => f.close()));
});

agones(
  'agones :: /ready once after it serves, /health at its interval, players as label and counter, /shutdown before leaving after /update',
  async () => {
    const fake = await fakeSdk();
    const demo = await startDemo([...FAST_HEALTH, '--cvar', 'game.round_length=1'], { env: { ...TOKEN, ...fake.env } });
    const player = await udpPlayer(demo.port);
    try {
      await waitFor('the GameServer to be Ready', () => fake.gameServer().status.state === 'Ready', 5_000);
      await waitFor('the log line', () => demo.output().includes('told Agones the server is Ready'));
      const served = demo.output().indexOf('status api listening');
      assert.ok(
        served >= 0 && served < demo.output().indexOf('told Agones the server is Ready'),
        'Ready after /status',
      );
      assert.is((await fetch(`${demo.base}/status`)).status, 200);

      assert.is(await player.send('join alice'), 'welcome alice');
      await waitFor('players = 1', () => {
        const gs = fake.gameServer();
        return gs.object_meta.labels[playersLabel] === '1' && gs.status.counters.players?.count === '1';
      });
      await waitFor('a second of health pings', () => fake.callsTo('POST', '/health').length >= 6, 3_000);
      const { pace, gaps } = healthPace(fake);
      assert.ok(pace >= 150 && pace <= 300, `pings every 200 ms on average: ${gaps.join(', ')}`);
      assert.ok(Math.max(...gaps) < 600, `no ping skipped: ${gaps.join(', ')}`);
      assert.is(fake.callsTo('POST', '/ready').length, 1, 'Ready once');

      assert.is((await post(`${demo.base}/update`, { WatchdogToken: 'tok' })).status, 200);
      const exit = await exitWithin(demo);
      const exitedAt = Date.now();
      assert.equal(exit, { code: 0, signal: null });
      assert.match(demo.output(), /round over; restarting for the update/);
      const shutdowns = fake.callsTo('POST', '/shutdown');
      assert.is(shutdowns.length, 1, '/shutdown once');
      assert.ok((shutdowns[0]?.at ?? Number.POSITIVE_INFINITY) <= exitedAt);
      assert.is(fake.gameServer().status.state, 'Shutdown');
      assert.ok(
        fake.calls.every((c) => c.status === 200),
        `every call well-formed: ${JSON.stringify(fake.calls.filter((c) => c.status !== 200))}`,
      );
    } finally {
      await player.close();
      await demo.kill();
      await fake.close();
    }
  },
);

agones(
  'agones :: an SDK server that starts 3 s after the game server: still Ready; a /shutdown request ends in /shutdown',
  async () => {
    const started = Date.now();
    const fake = await fakeSdk({ delayMs: 3_000 });
    const demo = await startDemo(FAST_HEALTH, { env: { ...TOKEN, ...fake.env } });
    try {
      await fake.listening;
      assert.ok(Date.now() - started >= 3_000, 'the SDK server came 3 s after the game server started');
      assert.match(demo.output(), /status api listening/, 'and the game server served before it');
      assert.match(demo.output(), /Agones health ping failed/, 'it was trying before the SDK server came');
      await waitFor('the GameServer to be Ready', () => fake.gameServer().status.state === 'Ready', 5_000);
      assert.is(fake.callsTo('POST', '/ready').length, 1);
      await waitFor('health pings', () => fake.callsTo('POST', '/health').length >= 2, 2_000);
      await waitFor('the players label', () => fake.gameServer().object_meta.labels[playersLabel] === '0', 2_000);
      assert.is(demo.exit(), undefined, 'still running');
      assert.is((await post(`${demo.base}/shutdown`, { WatchdogToken: 'tok' }, '{"Reason":"Leaving"}')).status, 200);
      assert.equal(await exitWithin(demo), { code: 0, signal: null });
      assert.is(fake.callsTo('POST', '/shutdown').length, 1);
    } finally {
      await demo.kill();
      await fake.close();
    }
  },
);

agones('agones :: a GameServer moved to Shutdown makes it leave at round end; no counter is tolerated', async () => {
  const fake = await fakeSdk({ counters: false });
  const demo = await startDemo([...FAST_HEALTH, '--cvar', 'game.round_length=1'], { env: fake.env });
  const player = await udpPlayer(demo.port);
  try {
    assert.is(await player.send('join bob'), 'welcome bob');
    await waitFor('players = 1', () => fake.gameServer().object_meta.labels[playersLabel] === '1', 5_000);
    fake.setState('Shutdown');
    assert.match(await player.receive(3_000), /^announce the server shuts down at the end of round \d+/);
    assert.is(demo.exit(), undefined, 'not at once: a player is on');
    assert.equal(await exitWithin(demo, 5_000), { code: 0, signal: null });
    assert.match(demo.output(), /round over; leaving as the GameServer shuts down/);
    assert.is(fake.callsTo('POST', '/shutdown').length, 0, 'already Shutdown: not asked again');
    assert.is(fake.callsTo('PATCH', '/v1beta1/counters/players').length, 1, 'the counter was tried once');
    assert.not.match(demo.output(), /WARN.*[Cc]ounter/, 'a missing Counter is no warning');
  } finally {
    await player.close();
    await demo.kill();
    await fake.close();
  }
});

agones('agones :: SIGTERM (Agones deleting the pod) exits without /shutdown', async () => {
  const fake = await fakeSdk();
  const demo = await startDemo(FAST_HEALTH, { env: fake.env });
  try {
    await waitFor('Ready', () => fake.gameServer().status.state === 'Ready', 5_000);
    process.kill(demo.pid, 'SIGTERM');
    assert.equal(await exitWithin(demo), { code: 0, signal: null });
    assert.match(demo.output(), /stopping: received SIGTERM/);
    assert.is(fake.callsTo('POST', '/shutdown').length, 0);
  } finally {
    await demo.kill();
  }
});
agones('agones :: a fatal error: a clean stop that asks Agones for /shutdown, then exit 1', async () => {
  const fake = await fakeSdk();
  const demo = await startDemo([...FAST_HEALTH, '--cvar', 'demo.throw_after=0.5'], { env: fake.env });
  try {
    assert.equal(await exitWithin(demo, 8_000), { code: 1, signal: null });
    assert.match(demo.output(), /fatal error: Error: thrown on purpose \(demo\.throw_after=0\.5\)/);
    assert.is(fake.callsTo('POST', '/shutdown').length, 1);
    assert.is(fake.gameServer().status.state, 'Shutdown');
  } finally {
    await demo.kill();
  }
});
agones.run();
