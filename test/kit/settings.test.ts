import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { envCvars, loadSettings, parseArgs, SettingsError } from '../../src/kit/settings.ts';
import { tempSuite } from '../_support/env.ts';
import { assertThrowsWith } from './_support/throws.ts';

const args = suite('settings :: argv');

args('settings :: --cvar splits at the first =, keeps order; --config-file and --data-dir are read', () => {
  const p = parseArgs([
    '--cvar',
    'a.b=1',
    '--config-file',
    '/x/config.toml',
    '--cvar',
    'url=http://h/?q=1',
    '--data-dir',
    '/x/data',
    '--cvar',
    'a.b=2',
  ]);
  assert.equal(p.cvars, [
    ['a.b', '1'],
    ['url', 'http://h/?q=1'],
    ['a.b', '2'],
  ]);
  assert.is(p.configFile, '/x/config.toml');
  assert.is(p.dataDir, '/x/data');
  assert.equal(p.warnings, []);
});

args('settings :: an empty value is allowed (name=)', () => {
  assert.equal(parseArgs(['--cvar', 'hub.tags=']).cvars, [['hub.tags', '']]);
});

args('settings :: unknown arguments warn and are skipped', () => {
  const p = parseArgs(['--frobnicate', '--cvar', 'x=1', 'stray']);
  assert.equal(p.cvars, [['x', '1']]);
  assert.equal(p.warnings, ['Unknown argument: --frobnicate', 'Unknown argument: stray']);
});

args('settings :: engine arguments the kit does not implement consume their value and warn once', () => {
  const p = parseArgs(['--loglevel', 'net=debug', '--cvar', 'x=1']);
  assert.equal(p.cvars, [['x', '1']]);
  assert.is(p.warnings.length, 1);
  assert.match(p.warnings[0] ?? '', /--loglevel net=debug/);
});

const malformed: Array<[string, string[], RegExp]> = [
  ['--cvar without =', ['--cvar', 'net.port'], /expected name=value.*no "="/],
  ['--cvar with an empty name', ['--cvar', '=5'], /empty name/],
  ['--cvar with no value at the end', ['--cvar'], /--cvar needs a value/],
  ['--config-file with no value', ['--config-file'], /--config-file needs a value/],
  ['--data-dir with no value', ['--data-dir'], /--data-dir needs a value/],
];
for (const [what, argv, message] of malformed) {
  args(`settings :: malformed: ${what} → SettingsError`, () => {
    assertThrowsWith(() => parseArgs(argv), SettingsError, message);
  });
}
args.run();

// ---
const env = suite('settings :: environment');

env('settings :: ROBUST_CVAR_a__b → a.b with case kept; ROBUST_CVARS split on ; and the first =', () => {
  const list = envCvars({
    ROBUST_CVARS: 'game.hostname=Hi=There;;hub.tags=a,b',
    ROBUST_CVAR_watchdog__baseUrl: 'http://x',
    ROBUST_CVAR_watchdog__token: 's3cr=t',
    PATH: '/bin',
  });
  assert.equal(list, [
    ['game.hostname', 'Hi=There'],
    ['hub.tags', 'a,b'],
    ['watchdog.baseUrl', 'http://x'],
    ['watchdog.token', 's3cr=t'],
  ]);
});

env('settings :: a ROBUST_CVARS entry without = is an error naming the variable', () => {
  assert.throws(() => envCvars({ ROBUST_CVARS: 'oops' }), /ROBUST_CVARS: expected name=value/);
});
env.run();

// ---
const layering = tempSuite('settings :: layering and typed getters');

layering('settings :: defaults < config file < ROBUST_CVARS < ROBUST_CVAR_* < argv (in order)', async ({ dir }) => {
  const file = join(dir, 'config.toml');
  await writeFile(
    file,
    [
      'top = "level"',
      '[game]',
      'hostname = "from config"',
      'desc = "config desc"',
      'soft_max_players = 10',
      'lobby = true',
      '[status.links]',
      'x = 1',
      '[a]',
      'b = "config"',
      'c = "config"',
      'd = "config"',
      'e = "config"',
    ].join('\n'),
  );
  const s = loadSettings({
    argv: ['--config-file', file, '--cvar', 'a.e=argv1', '--cvar', 'a.e=argv2'],
    env: { ROBUST_CVARS: 'a.c=cvars;a.d=cvars', ROBUST_CVAR_a__d: 'cvar_', ROBUST_CVAR_a__e: 'cvar_' },
    defaults: { 'a.b': 'default', 'a.z': 'default', 'game.round_length': 60 },
  });
  assert.is(s.string('a.z'), 'default');
  assert.is(s.string('a.b'), 'config');
  assert.is(s.string('a.c'), 'cvars');
  assert.is(s.string('a.d'), 'cvar_');
  assert.is(s.string('a.e'), 'argv2');
  assert.is(s.origin('a.e'), 'argv');
  assert.is(s.string('game.hostname'), 'from config');
  assert.is(s.int('game.soft_max_players', 0), 10);
  assert.is(s.bool('game.lobby', false), true);
  assert.is(s.int('game.round_length', 0), 60);
  assert.is(s.int('status.links.x', 0), 1, 'nested tables are dotted prefixes');
  assert.is(s.string('top'), 'level');
  assert.is(s.configFile, file);
});

layering('settings :: a missing config file is only remembered', () => {
  const s = loadSettings({ argv: ['--config-file', '/nonexistent/config.toml', '--data-dir', '/nonexistent/data'] });
  assert.is(s.configFile, '/nonexistent/config.toml');
  assert.is(s.dataDir, '/nonexistent/data');
  assert.equal(s.names(), []);
});

layering('settings :: a TOML array becomes JSON text', async ({ dir }) => {
  const file = join(dir, 'config.toml');
  await writeFile(file, '[status]\nlinks = [{ name = "Wiki", icon = "wiki", url = "https://w" }]\n');
  const s = loadSettings({ argv: ['--config-file', file] });
  assert.equal(JSON.parse(s.string('status.links')), [{ name: 'Wiki', icon: 'wiki', url: 'https://w' }]);
});

layering('settings :: a broken config file is an error naming file and line', async ({ dir }) => {
  const file = join(dir, 'config.toml');
  await writeFile(file, '[game]\nhostname = \n');
  assert.throws(
    () => loadSettings({ argv: ['--config-file', file] }),
    (err: unknown) => err instanceof SettingsError && err.message.includes(`${file}:2:`) && err.cause !== undefined,
  );
});

layering('settings :: typed getters: defaults when unset, parsed values, clear errors on the wrong type', () => {
  const s = loadSettings({
    argv: ['--cvar', 'i=42', '--cvar', 'f=0.25', '--cvar', 'b=False', '--cvar', 'bad=abc', '--cvar', 'neg=-3'],
  });
  assert.is(s.int('i', 0), 42);
  assert.is(s.int('neg', 0), -3);
  assert.is(s.int('unset', 7), 7);
  assert.is(s.float('f', 0), 0.25);
  assert.is(s.float('i', 0), 42);
  assert.is(s.float('unset', 1.5), 1.5);
  assert.is(s.bool('b', true), false);
  assert.is(s.bool('unset', true), true);
  assert.is(s.string('unset', 'x'), 'x');
  assert.throws(() => s.int('bad', 0), /cvar bad must be an integer but is "abc"/);
  assert.throws(() => s.int('f', 0), /must be an integer/);
  assert.throws(() => s.float('bad', 0), /must be a number/);
  assert.throws(() => s.bool('bad', false), /must be true or false/);
});
layering.run();
