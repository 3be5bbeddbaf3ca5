import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectAddressOf, infoForWire } from '../../src/kit/api-watchdog.ts';
import { type Info, validateInfo, validateStatus } from '../../src/kit/schemas.ts';
import { INFO_ACZ, INFO_EXTERNAL, INFO_NO_BUILD, STATUS_IN_ROUND, STATUS_LOBBY } from '../fixtures/engine/payloads.ts';

const status = suite('schemas :: Status');

status('schemas :: a full status passes and keeps extra fields', () => {
  const raw = { name: 'Test', players: 3, soft_max_players: 32, tags: ['18+', 'region:eu_w'], round_id: 7 };
  const r = validateStatus(raw);
  assert.equal(r.problems, []);
  assert.equal(r.value, raw);
});

status('schemas :: tags and soft_max_players are optional', () => {
  assert.equal(validateStatus({ name: 'x', players: 0 }).problems, []);
});

const BAD_STATUS: Array<[string, unknown, string, RegExp]> = [
  ['not an object', 'hello', '', /status must be a JSON object/],
  ['null', null, '', /status must be a JSON object/],
  ['missing name', { players: 1 }, 'name', /required but missing/],
  ['missing players', { name: 'x' }, 'players', /required but missing/],
  ['name not a string', { name: 5, players: 1 }, 'name', /name must be a string/],
  ['fractional players', { name: 'x', players: 1.5 }, 'players', /whole number/],
  ['negative players', { name: 'x', players: -1 }, 'players', /negative/],
  ['players as a string', { name: 'x', players: '1' }, 'players', /must be a number/],
  ['bad soft max', { name: 'x', players: 1, soft_max_players: 'lots' }, 'soft_max_players', /must be a number/],
  ['tags not an array', { name: 'x', players: 1, tags: 'a,b' }, 'tags', /array of strings/],
  ['run level by name', { name: 'x', players: 1, run_level: 'InRound' }, 'run_level', /must be a number/],
  ['fractional run level', { name: 'x', players: 1, run_level: 0.5 }, 'run_level', /whole number/],
  [
    'round start not ISO-8601',
    { name: 'x', players: 1, round_start_time: '05/01/2024 12:00' },
    'round_start_time',
    /ISO-8601/,
  ],
  [
    'round start not a date',
    { name: 'x', players: 1, round_start_time: '2024-13-45T00:00:00Z' },
    'round_start_time',
    /ISO-8601/,
  ],
  [
    'round start a number',
    { name: 'x', players: 1, round_start_time: 1714566896 },
    'round_start_time',
    /must be a string/,
  ],
  ['tag not a string', { name: 'x', players: 1, tags: ['a', 3] }, 'tags.1', /tag must be a string/],
  [
    'bad standard tag',
    { name: 'x', players: 1, tags: ['18+', 'rp:extreme'] },
    'tags.1',
    /"rp:extreme": role-play level/,
  ],
  ['unknown region', { name: 'x', players: 1, tags: ['region:mars'] }, 'tags.0', /unknown region code/],
];
for (const [what, raw, path, message] of BAD_STATUS) {
  status(`schemas :: problem: ${what} → ${path || '(root)'}`, () => {
    const { problems } = validateStatus(raw);
    const hit = problems.find((p) => p.path === path);
    assert.ok(hit, `expected a problem at "${path}", got ${JSON.stringify(problems)}`);
    assert.match(hit.message, message);
  });
}
status('schemas :: what a real engine sends passes: game fields, lobby with map null and no tags, .NET escapes', () => {
  for (const body of [STATUS_IN_ROUND, STATUS_LOBBY]) {
    const raw = JSON.parse(body) as Record<string, unknown>;
    const r = validateStatus(raw);
    assert.equal(r.problems, [], body);
    assert.equal(r.value, raw, 'extra fields kept as they came');
  }
  assert.equal(validateStatus({ name: 'x', players: 0, run_level: null, round_start_time: null }).problems, []);
});

status.run();

// ---
const info = suite('schemas :: Info');

const GOOD: Info = {
  connect_address: 'udp://example.com:1212/',
  auth: { mode: 'Required', public_key: 'AAAA' },
  build: {
    engine_version: '289.0.0',
    fork_id: 'demo',
    version: '1',
    download_url: '',
    hash: null,
    acz: false,
    manifest_url: null,
    manifest_download_url: null,
    manifest_hash: null,
  },
  desc: 'A server',
  links: [
    { name: 'Wiki', icon: 'wiki', url: 'https://wiki.example' },
    { name: 'Site', url: 'http://example.com' },
  ],
  privacy_policy: { link: 'https://example.com/privacy', identifier: 'example', version: '1' },
};

info('schemas :: a full info passes', () => {
  assert.equal(validateInfo(GOOD).problems, []);
});

info('schemas :: either spelling of the connect address is accepted; build may be null; desc/privacy optional', () => {
  assert.equal(
    validateInfo({ connect_addrees: 'udp://h:1/', auth: { mode: 'Disabled' }, build: null, links: [] }).problems,
    [],
  );
  assert.equal(validateInfo({ auth: { mode: 'Optional', public_key: '' }, build: {}, links: [] }).problems, []);
  assert.equal(validateInfo({ connect_address: '', auth: { mode: 'Optional' }, build: null, links: [] }).problems, []);
});

info(
  'schemas :: what a real engine sends passes: ACZ, watchdog-hosted client, no build; links and privacy policy optional',
  () => {
    for (const body of [INFO_ACZ, INFO_EXTERNAL, INFO_NO_BUILD])
      assert.equal(validateInfo(JSON.parse(body)).problems, [], body);
    assert.is(validateInfo(JSON.parse(INFO_ACZ)).value?.links, undefined);
  },
);

info("schemas :: links: the launcher's icon names, the spec's, a null icon or none", () => {
  const icons = ['discord', 'github', 'telegram', 'web', 'wiki', 'forum', 'chat', 'codehost', null];
  const links = icons.map((icon, i) => ({ name: `L${i}`, icon, url: `https://l${i}.example` }));
  assert.equal(
    validateInfo({
      auth: { mode: 'Required' },
      build: null,
      links: [...links, { name: 'plain', url: 'https://p.example' }],
    }).problems,
    [],
  );
});

const base = { auth: { mode: 'Required', public_key: 'k' }, build: null, links: [] };
const BAD_INFO: Array<[string, unknown, string, RegExp]> = [
  ['not an object', [1], '', /info must be a JSON object/],
  ['auth not an object', { ...base, auth: 'Required' }, 'auth', /auth must be an object/],
  ['missing auth', { build: null, links: [] }, 'auth', /required but missing/],
  ['bad auth mode', { ...base, auth: { mode: 'required' } }, 'auth.mode', /Optional, Required, Disabled/],
  ['missing build', { auth: base.auth, links: [] }, 'build', /required but missing/],
  ['build field of the wrong type', { ...base, build: { acz: 'yes' } }, 'build.acz', /true or false/],
  ['build string field a number', { ...base, build: { version: 3 } }, 'build.version', /string or null/],
  ['links not an array', { ...base, links: {} }, 'links', /array of link objects/],
  [
    'link icon unknown',
    { ...base, links: [{ name: 'D', icon: 'twitter', url: 'https://d' }] },
    'links.0.icon',
    /chat, codehost, discord, forum, github, telegram, web, wiki/,
  ],
  [
    'link icon in the wrong case',
    { ...base, links: [{ name: 'D', icon: 'Discord', url: 'https://d' }] },
    'links.0.icon',
    /discord/,
  ],
  [
    'link url without http(s)',
    { ...base, links: [{ name: 'D', url: 'ftp://d' }] },
    'links.0.url',
    /http:\/\/ or https:\/\//,
  ],
  ['link url relative', { ...base, links: [{ name: 'D', url: '/wiki' }] }, 'links.0.url', /http:\/\//],
  ['link without name', { ...base, links: [{ url: 'https://d' }] }, 'links.0.name', /required/],
  [
    'privacy policy without identifier',
    { ...base, privacy_policy: { link: 'https://p', version: '1' } },
    'privacy_policy.identifier',
    /required/,
  ],
  [
    'privacy policy with a bad link',
    { ...base, privacy_policy: { link: 'nope', identifier: 'i', version: '1' } },
    'privacy_policy.link',
    /http/,
  ],
  [
    'privacy policy with an empty version',
    { ...base, privacy_policy: { link: 'https://p', identifier: 'i', version: '' } },
    'privacy_policy.version',
    /empty/,
  ],
  ['connect address not udp', { ...base, connect_address: 'http://h:1212/' }, 'connect_address', /udp:\/\//],
  ['connect address (spec spelling) not a URI', { ...base, connect_addrees: 'h:1212' }, 'connect_addrees', /udp:\/\//],
  [
    'the two spellings disagree',
    { ...base, connect_address: 'udp://a:1/', connect_addrees: 'udp://b:1/' },
    'connect_address',
    /differs/,
  ],
  ['desc not a string', { ...base, desc: 5 }, 'desc', /desc must be a string/],
];
for (const [what, raw, path, message] of BAD_INFO) {
  info(`schemas :: problem: ${what} → ${path}`, () => {
    const { problems } = validateInfo(raw);
    const hit = problems.find((p) => p.path === path);
    assert.ok(hit, `expected a problem at "${path}", got ${JSON.stringify(problems)}`);
    assert.match(hit.message, message);
  });
}

info('schemas :: infoForWire writes the connect address under both spellings, first', () => {
  const wire = infoForWire({ ...base, auth: { mode: 'Required' }, connect_addrees: 'udp://x:1/' });
  assert.is(wire.connect_address, 'udp://x:1/');
  assert.is(wire.connect_addrees, 'udp://x:1/');
  assert.equal(Object.keys(wire).slice(0, 2), ['connect_address', 'connect_addrees']);
  assert.is(infoForWire({ auth: { mode: 'Required' }, build: null, links: [] }).connect_address, '');
  assert.is(connectAddressOf({ connect_address: 'udp://e:1/', connect_addrees: 'udp://s:1/' }), 'udp://e:1/');
});
info.run();
