import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type FakeAgonesSdk, type FakeAgonesSdkOptions, healthPace, startAgonesSdk } from '../_support/agones-sdk.ts';
import { exitWithin, post, startDemo, udpPlayer } from '../_support/demo.ts';
import { freePort, waitFor } from '../_support/env.ts';

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
      await waitFor('the GameServer to be Ready', () => fake.gameServer().status.state === 'Ready', 10_000);
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
      await waitFor('a second of health pings', () => fake.callsTo('POST', '/health').length >= 6, 10_000);
      // A timer never fires early, so load cannot make the pings come faster than their interval: only a lower
      // bound is a fact (six of them in the wait above showed they keep coming).
      const { pace, gaps } = healthPace(fake);
      assert.ok(pace >= 150, `pings every 200 ms on average, not faster: ${gaps.join(', ')}`);
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
  'agones :: an SDK server that starts after the game server tried it: still Ready; a /shutdown request ends in /shutdown',
  async () => {
    // The SDK server's port is known from the start, and it listens only once the game server has served and failed
    // a health ping on it.
    const port = await freePort();
    const demo = await startDemo(FAST_HEALTH, { env: { ...TOKEN, AGONES_SDK_HTTP_PORT: String(port) } });
    try {
      await waitFor('a failed health ping', () => /Agones health ping failed/.test(demo.output()), 30_000);
      assert.match(demo.output(), /status api listening/, 'the game server served before the SDK server came');
      const sdk = await fakeSdk({ port }); // closed after the test, with every fake
      await waitFor('the GameServer to be Ready', () => sdk.gameServer().status.state === 'Ready', 10_000);
      assert.is(sdk.callsTo('POST', '/ready').length, 1);
      await waitFor('health pings', () => sdk.callsTo('POST', '/health').length >= 2, 10_000);
      await waitFor('the players label', () => sdk.gameServer().object_meta.labels[playersLabel] === '0', 10_000);
      assert.is(demo.exit(), undefined, 'still running');
      assert.is((await post(`${demo.base}/shutdown`, { WatchdogToken: 'tok' }, '{"Reason":"Leaving"}')).status, 200);
      assert.equal(await exitWithin(demo), { code: 0, signal: null });
      assert.is(sdk.callsTo('POST', '/shutdown').length, 1);
    } finally {
      await demo.kill();
    }
  },
);

agones('agones :: a GameServer moved to Shutdown makes it leave at round end; no counter is tolerated', async () => {
  const fake = await fakeSdk({ counters: false });
  const demo = await startDemo([...FAST_HEALTH, '--cvar', 'game.round_length=1'], { env: fake.env });
  const player = await udpPlayer(demo.port);
  try {
    assert.is(await player.send('join bob'), 'welcome bob');
    await waitFor('players = 1', () => fake.gameServer().object_meta.labels[playersLabel] === '1', 10_000);
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
    await waitFor('Ready', () => fake.gameServer().status.state === 'Ready', 10_000);
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
