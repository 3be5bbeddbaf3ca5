import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { archiveHasPlatform, isClientArchiveName, serverArchivePlatform } from '../../src/updates/archive/names.ts';
import {
  type Host,
  hostPackagingRid,
  hostRid,
  isMusl,
  pickPlatform,
  readLibcEvidence,
  ridFallbacks,
  THIS_HOST,
} from '../../src/updates/platform.ts';
import { tempDir } from '../_support/env.ts';

const chain = suite('ridFallbacks');

chain("ridFallbacks :: the real watchdog's orders", () => {
  assert.equal(ridFallbacks('linux-x64'), ['linux-x64', 'linux', 'unix-x64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('linux-arm64'), ['linux-arm64', 'linux', 'unix-arm64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('osx-arm64'), ['osx-arm64', 'osx', 'unix-arm64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('osx-x64'), ['osx-x64', 'osx', 'unix-x64', 'unix', 'any', 'base']);
  assert.equal(ridFallbacks('win-x64'), ['win-x64', 'win', 'any', 'base']);
});

chain('ridFallbacks :: linux-musl-x64 tries musl builds, then the glibc chain', () => {
  assert.equal(ridFallbacks('linux-musl-x64'), [
    'linux-musl-x64',
    'linux-musl',
    'linux-x64',
    'linux',
    'unix-x64',
    'unix',
    'any',
    'base',
  ]);
  assert.is(pickPlatform(['win-x64', 'linux-x64'], 'linux-musl-x64'), 'linux-x64');
  assert.is(pickPlatform(['linux-x64', 'linux-musl-x64'], 'linux-musl-x64'), 'linux-musl-x64');
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
  assert.match(hostRid(), /^[a-z0-9]+(-musl)?-[a-z0-9]+$/);
  if (process.platform === 'linux' && process.arch === 'x64')
    assert.ok(['linux-x64', 'linux-musl-x64'].includes(hostRid()));
  assert.is(hostRid('  '), hostRid());
});

pick.run();

// ---

const libc = suite('host C library');

/** A host whose musl answer is given; `asked` counts the questions. */
const host = (platform: NodeJS.Platform, arch: string, musl: boolean): Host & { asked: number } => {
  const h: Host & { asked: number } = {
    platform,
    arch,
    asked: 0,
    musl: () => {
      h.asked++;
      return musl;
    },
  };
  return h;
};

libc('hostRid :: linux-musl-<arch> on musl, linux-<arch> on glibc, as .NET names them', () => {
  assert.is(hostRid(undefined, host('linux', 'x64', true)), 'linux-musl-x64');
  assert.is(hostRid(undefined, host('linux', 'arm64', true)), 'linux-musl-arm64');
  assert.is(hostRid(undefined, host('linux', 'x64', false)), 'linux-x64');
  const mac = host('darwin', 'arm64', true);
  assert.is(hostRid(undefined, mac), 'osx-arm64');
  assert.is(mac.asked, 0, 'the C library matters on Linux only');
  const overridden = host('linux', 'x64', true);
  assert.is(hostRid('linux-x64', overridden), 'linux-x64', 'Updates.Platform wins');
  assert.is(overridden.asked, 0);
});

libc('hostPackagingRid :: a Git build is packaged for <os>-<arch> even on musl, as the real watchdog asks', () => {
  assert.is(hostPackagingRid(undefined, host('linux', 'x64', true)), 'linux-x64');
  assert.is(hostPackagingRid(undefined, host('win32', 'x64', false)), 'win-x64');
  assert.is(hostPackagingRid('linux-arm64', host('linux', 'x64', true)), 'linux-arm64');
});

libc("isMusl :: the runtime's own libraries decide first, then the loader, then os-release", () => {
  assert.not.ok(
    isMusl({ glibcVersionRuntime: '2.36', muslLoaders: ['ld-musl-x86_64.so.1'] }),
    'a glibc runtime beside a musl loader',
  );
  assert.ok(isMusl({ sharedObjects: ['/lib/ld-musl-x86_64.so.1', '/usr/lib/libstdc++.so.6'] }));
  assert.ok(isMusl({ sharedObjects: ['/usr/lib/libc.musl-aarch64.so.1'] }));
  assert.not.ok(isMusl({ sharedObjects: ['/lib/x86_64-linux-gnu/libc.so.6'], osReleaseId: 'debian' }));
  assert.ok(isMusl({ muslLoaders: ['ld-musl-x86_64.so.1'] }));
  assert.ok(isMusl({ osReleaseId: 'alpine' }));
  assert.not.ok(isMusl({}));
});

libc('readLibcEvidence :: reads the musl loader in lib/ and the ID in etc/os-release', async () => {
  const alpine = await tempDir('wd-libc-');
  const debian = await tempDir('wd-libc-');
  try {
    await mkdir(join(alpine.path, 'lib'));
    await mkdir(join(alpine.path, 'etc'));
    await writeFile(join(alpine.path, 'lib', 'ld-musl-x86_64.so.1'), '');
    await writeFile(join(alpine.path, 'lib', 'libz.so.1'), '');
    await writeFile(join(alpine.path, 'etc', 'os-release'), 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.20.0\n');
    const found = readLibcEvidence({ root: alpine.path, report: false });
    assert.equal(found, { muslLoaders: ['ld-musl-x86_64.so.1'], osReleaseId: 'alpine' });
    assert.ok(isMusl(found));

    await mkdir(join(debian.path, 'etc'));
    await writeFile(join(debian.path, 'etc', 'os-release'), 'PRETTY_NAME="Debian GNU/Linux 12"\nID="debian"\n');
    const glibc = readLibcEvidence({ root: debian.path, report: false });
    assert.equal(glibc, { osReleaseId: 'debian' }, 'no lib/ is left out, quotes are dropped');
    assert.not.ok(isMusl(glibc));
  } finally {
    await alpine.cleanup();
    await debian.cleanup();
  }
});

libc('readLibcEvidence :: this process agrees with the platform key it gets', () => {
  if (process.platform !== 'linux') return;
  const evidence = readLibcEvidence();
  assert.is(THIS_HOST.musl(), isMusl(evidence));
  assert.is(hostRid().includes('-musl-'), isMusl(evidence));
  // Node on glibc says so in its report, and that settles it.
  if (evidence.glibcVersionRuntime) assert.not.ok(THIS_HOST.musl());
});

libc.run();

// ---

const names = suite('archive names');

/** File names and the platform key read from them; undefined: not a server archive (and why, where not plain). */
const ARCHIVE_NAMES: Array<[file: string, key: string | undefined, why?: string]> = [
  ['SS14.Server_linux-x64.zip', 'linux-x64'],
  ['my-server-linux-arm64.tar.gz', 'linux-arm64'],
  ['server_osx-arm64.tgz', 'osx-arm64'],
  ['server_linux-musl-x64.zip', 'linux-musl-x64'],
  ['server_win-x64.tar', 'win-x64'],
  ['SS14.Client.zip', undefined],
  ['Client_linux-x64.zip', undefined, 'client archives are not server archives'],
  ['notes-linux-x64.txt', undefined],
  ['server.zip', undefined],
];

names('archive names :: platform key right before the extension, after _ or -', () => {
  for (const [file, key, why] of ARCHIVE_NAMES) assert.is(serverArchivePlatform(file), key, why);
});

names('archive names :: archiveHasPlatform matches the whole key only', () => {
  assert.ok(archiveHasPlatform('SS14.Server_linux-x64.zip', 'linux-x64'));
  assert.not.ok(archiveHasPlatform('SS14.Server_linux-x64.zip', 'linux'));
  assert.ok(archiveHasPlatform('SS14.Server_linux.zip', 'linux'));
  assert.ok(isClientArchiveName('SS14.CLIENT.zip'));
});

names.run();
