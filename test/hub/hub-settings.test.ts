import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { advertiseEventOf, DEFAULT_HUB, hubSettingsOf } from '../../src/hub/hub-watch.ts';

test('hub settings :: config.toml, then ROBUST_CVAR_*, then --cvar, as the engine layers them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wd-hub-'));
  try {
    const file = join(dir, 'config.toml');
    await writeFile(file, '[hub]\nadvertise = true\nserver_url = "ss14://game.example.net"\n');
    assert.equal(await hubSettingsOf(['--config-file', file], {}), {
      serverUrl: 'ss14://game.example.net',
      hubUrls: [DEFAULT_HUB],
      intervalSeconds: 120,
      problems: [],
    });
    const env = { ROBUST_CVAR_hub__hub_urls: 'https://hub.a/, https://hub.b' };
    const s = await hubSettingsOf(['--config-file', file, '--cvar', 'hub.advertise_interval=30'], env);
    assert.equal(s?.hubUrls, ['https://hub.a/', 'https://hub.b']);
    assert.is(s?.intervalSeconds, 30);
    assert.equal(s?.problems, [
      'hub.hub_urls entry https://hub.b lacks its trailing slash: the engine posts to https://hub.bapi/servers/advertise',
    ]);
    assert.is(await hubSettingsOf(['--config-file', file, '--cvar', 'hub.advertise=false'], {}), null);
    assert.is(await hubSettingsOf([], {}), null, 'advertising is off by default');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('advertise log :: the engine hub lines, and nothing else', () => {
  assert.equal(
    advertiseEventOf('[INFO] hub: Successfully advertised to https://hub.spacestation14.com/ with address ss14://a.b'),
    {
      type: 'advertised',
      hub: 'https://hub.spacestation14.com/',
      address: 'ss14://a.b',
    },
  );
  assert.equal(advertiseEventOf('[INFO] hub: Guessed server address to be ss14://1.2.3.4:1212'), {
    type: 'guessed',
    address: 'ss14://1.2.3.4:1212',
  });
  assert.equal(advertiseEventOf('[ERRO] hub: Exception while trying to advertise server to https://hub.x/'), {
    type: 'failed',
    hub: 'https://hub.x/',
  });
  assert.is(advertiseEventOf('[INFO] game: round 5 started'), null);
});

test.run();
