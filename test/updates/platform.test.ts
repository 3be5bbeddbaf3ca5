import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { archiveHasPlatform, isClientArchiveName, serverArchivePlatform } from '../../src/updates/archive-names.ts';
import { hostRid, pickPlatform, ridFallbacks } from '../../src/updates/platform.ts';

const chain = suite('ridFallbacks');

chain('ridFallbacks :: the orders of REFERENCE §8.1', () => {
  assert.equal(ridFallbacks('linux-x64'), ['linux-x64', 'linux', 'unix-x64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('linux-arm64'), ['linux-arm64', 'linux', 'unix-arm64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('osx-arm64'), ['osx-arm64', 'osx', 'unix-arm64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('osx-x64'), ['osx-x64', 'osx', 'unix-x64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('win-x64'), ['win-x64', 'win', 'any', 'base']);
});

chain('ridFallbacks :: osx-arm64 never falls back to an x64 build', () => {
  assert.not.ok(ridFallbacks('osx-arm64').some((r) => r.includes('x64')));
});

chain('ridFallbacks :: an RID the catalog does not know is tried first, then its OS chain', () => {
  assert.equal(ridFallbacks('linux-riscv64'), ['linux-riscv64', 'linux', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('plan9-x64'), ['plan9-x64', 'any', 'base']);
});

chain.run();

// ---

const pick = suite('pickPlatform');

pick('pickPlatform :: the most specific key offered wins', () => {
  assert.is(pickPlatform(['win-x64', 'linux', 'linux-x64'], 'linux-x64'), 'linux-x64');
  assert.is(pickPlatform(['win-x64', 'linux', 'any'], 'linux-x64'), 'linux');
  assert.is(pickPlatform(['unix', 'any'], 'osx-arm64'), 'unix');
  assert.is(pickPlatform(['any'], 'win-x64'), 'any');
});

pick('pickPlatform :: nothing suitable is undefined', () => {
  assert.is(pickPlatform(['win-x64', 'osx-x64'], 'linux-x64'), undefined);
  assert.is(pickPlatform(['osx-x64', 'linux-arm64'], 'osx-arm64'), undefined);
  assert.is(pickPlatform([], 'linux-x64'), undefined);
});

pick('hostRid :: Updates.Platform overrides; otherwise os-arch of this host', () => {
  assert.is(hostRid('linux-arm64'), 'linux-arm64');
  assert.match(hostRid(), /^[a-z0-9]+-[a-z0-9]+$/);
  if (process.platform === 'linux' && process.arch === 'x64') assert.is(hostRid(), 'linux-x64');
  assert.is(hostRid('  '), hostRid());
});

pick.run();

// ---

const names = suite('archive names');

names('archive names :: platform key right before the extension, after _ or -', () => {
  assert.is(serverArchivePlatform('SS14.Server_linux-x64.zip'), 'linux-x64');
  assert.is(serverArchivePlatform('my-server-linux-arm64.tar.gz'), 'linux-arm64');
  assert.is(serverArchivePlatform('server_osx-arm64.tgz'), 'osx-arm64');
  assert.is(serverArchivePlatform('server_linux-musl-x64.zip'), 'linux-musl-x64');
  assert.is(serverArchivePlatform('server_win-x64.tar'), 'win-x64');
  assert.is(serverArchivePlatform('SS14.Client.zip'), undefined);
  assert.is(serverArchivePlatform('Client_linux-x64.zip'), undefined, 'client archives are not server archives');
  assert.is(serverArchivePlatform('notes-linux-x64.txt'), undefined);
  assert.is(serverArchivePlatform('server.zip'), undefined);
});

names('archive names :: archiveHasPlatform matches the whole key only', () => {
  assert.ok(archiveHasPlatform('SS14.Server_linux-x64.zip', 'linux-x64'));
  assert.not.ok(archiveHasPlatform('SS14.Server_linux-x64.zip', 'linux'));
  assert.ok(archiveHasPlatform('SS14.Server_linux.zip', 'linux'));
  assert.ok(isClientArchiveName('SS14.CLIENT.zip'));
});

names.run();
