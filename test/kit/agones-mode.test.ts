import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type AgonesModeOptions, agonesOptionsFrom, startAgonesMode } from '../../src/kit/agones/mode.ts';
import { loadSettings } from '../../src/kit/settings.ts';
import { type FakeAgonesSdk, healthPace, startAgonesSdk } from '../_support/agones-sdk.ts';
import { waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';

const FAST = { initialDelayMs: 20, maxDelayMs: 100, timeoutMs: 1_000 };

/**
 * No /health ping starts after `what` (a ping already on the wire may still land: one is allowed). The later marker:
 * a second Agones mode at the same 100 ms pace pings its own fake three times meanwhile.
 */
async function noPingsAfter(fake: FakeAgonesSdk, what: string) {
  const health = () => fake.callsTo('POST', '/health').length;
  const after = health();
  const other = await startAgonesSdk();
  const marker = modeOn(other);
  try {
    await waitFor('three pings of a second Agones mode', () => other.callsTo('POST', '/health').length >= 3, 10_000);
  } finally {
    await marker.stop();
    await other.close();
  }
  assert.ok(health() <= after + 1, `no ping after ${what}: ${health() - after} more`);
}

function modeOn(fake: FakeAgonesSdk, opts: Partial<AgonesModeOptions> & { players?: () => number } = {}) {
  return startAgonesMode({
    env: fake.env,
    sdkOptions: { retry: FAST },
    healthIntervalSeconds: 0.1,
    players: () => 0,
    log: captureLog(),
    ...opts,
  });
}

const mode = suite('agones mode (kit)');

mode('agones-mode :: off without AGONES_SDK_HTTP_PORT, unless told; on with it', async () => {
  assert.is(startAgonesMode({ env: {}, players: () => 0, log: captureLog() }).enabled, false);
  const fake = await startAgonesSdk();
  const on = modeOn(fake);
  const forcedOff = startAgonesMode({ enabled: false, env: fake.env, players: () => 0, log: captureLog() });
  try {
    assert.is(on.enabled, true);
    assert.is(forcedOff.enabled, false);
  } finally {
    await on.stop();
    await fake.close();
  }
});

mode('agones-mode :: the cvars agones.enabled and agones.health_interval', () => {
  const of = (...cvars: string[]) =>
    agonesOptionsFrom(loadSettings({ argv: cvars.flatMap((c) => ['--cvar', c]), env: {} }), {});
  assert.equal(of(), { enabled: undefined, env: {}, healthIntervalSeconds: 2 });
  assert.is(of('agones.enabled=false').enabled, false);
  assert.is(of('agones.enabled=true').enabled, true);
  assert.is(of('agones.health_interval=0.5').healthIntervalSeconds, 0.5);
  const env = { AGONES_SDK_HTTP_PORT: '9358' };
  assert.is(
    startAgonesMode({ ...of('agones.enabled=false'), env, players: () => 0, log: captureLog() }).enabled,
    false,
  );
});

mode(
  'agones-mode :: health at its interval from the start, /ready once when asked, players as label and counter',
  async () => {
    const fake = await startAgonesSdk();
    let count = 2;
    const agones = modeOn(fake, { players: () => count });
    try {
      await waitFor('five health pings', () => fake.callsTo('POST', '/health').length >= 5, 10_000);
      assert.is(fake.callsTo('POST', '/ready').length, 0, 'not Ready before the game says so');
      await Promise.all([agones.ready(), agones.ready()]);
      assert.is(fake.callsTo('POST', '/ready').length, 1, 'once');
      await waitFor('the players label', () => fake.gameServer().object_meta.labels['agones.dev/sdk-players'] === '2');
      await waitFor('the players counter', () => fake.gameServer().status.counters.players?.count === '2');
      count = 3;
      agones.playersChanged();
      await waitFor('the new count', () => fake.gameServer().status.counters.players?.count === '3', 10_000);
      // A timer never fires early, so load cannot make the pings come faster than their interval: only a lower
      // bound is a fact (five of them within 2 s above showed they keep coming).
      const { pace, gaps } = healthPace(fake);
      assert.ok(pace >= 70, `pings every 100 ms on average, not faster: ${gaps.join(', ')}`);
      await agones.stop();
      await noPingsAfter(fake, 'stop');
    } finally {
      await agones.stop();
      await fake.close();
    }
  },
);

mode('agones-mode :: a GameServer without the players counter: tried once, then the label alone', async () => {
  const fake = await startAgonesSdk({ counters: false });
  let count = 1;
  const log = captureLog();
  const agones = modeOn(fake, { players: () => count, log });
  try {
    await agones.ready();
    await waitFor('label 1', () => fake.gameServer().object_meta.labels['agones.dev/sdk-players'] === '1');
    count = 2;
    agones.playersChanged();
    await waitFor('label 2', () => fake.gameServer().object_meta.labels['agones.dev/sdk-players'] === '2');
    assert.is(fake.callsTo('PATCH', '/v1beta1/counters/players').length, 1);
    assert.is(log.lines.filter((l) => /players Counter is not available/.test(l)).length, 1, 'said once');
    assert.equal(
      log.lines.filter((l) => l.startsWith('warn') && /counter/i.test(l)),
      [],
      'no warning about it',
    );
  } finally {
    await agones.stop();
    await fake.close();
  }
});

mode('agones-mode :: the watch: Shutdown calls onShutdownState once; shutdown() then does not ask again', async () => {
  const fake = await startAgonesSdk();
  let told = 0;
  const agones = modeOn(fake, { onShutdownState: () => told++ });
  try {
    await agones.ready();
    await waitFor('the watch to see Ready', () => agones.state === 'Ready', 10_000);
    fake.setState('Shutdown');
    await waitFor('onShutdownState', () => told === 1, 10_000);
    fake.setState('Shutdown');
    await agones.shutdown('round over');
    assert.is(told, 1);
    assert.is(fake.callsTo('POST', '/shutdown').length, 0);
  } finally {
    await agones.stop();
    await fake.close();
  }
});

mode('agones-mode :: shutdown() asks Agones to end the GameServer and stops the pings', async () => {
  const fake = await startAgonesSdk();
  const agones = modeOn(fake);
  try {
    await agones.ready();
    await agones.shutdown('round over');
    assert.is(fake.callsTo('POST', '/shutdown').length, 1);
    assert.is(fake.gameServer().status.state, 'Shutdown');
    await noPingsAfter(fake, 'shutdown()');
  } finally {
    await agones.stop();
    await fake.close();
  }
});
mode.run();
