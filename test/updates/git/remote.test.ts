import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { checkBranch, forkIdOf, gitEnv, parseRemote } from '../../../src/updates/git/remote.ts';
import { DEFAULT_GIT_TIMEOUTS, remoteHead } from '../../../src/updates/git/repo.ts';
import { tempDir } from '../../_support/env.ts';
import { recordingLogger } from '../../fixtures/git/context.ts';
import { never, rejects } from '../_support/instance-suite.ts';

const remote = suite('git-remote');
const isUpdateError = (e: unknown) => e instanceof UpdateError;

remote('git-remote :: credentials leave the URL and travel as a header scoped to the origin', () => {
  const r = parseRemote('https://bot:s3cr%40t@git.example:8443/org/game.git');
  assert.is(r.url, 'https://git.example:8443/org/game.git');
  assert.is(r.display, r.url);
  assert.not.match(JSON.stringify([r.url, r.display]), /s3cr/);
  assert.is(r.env.GIT_CONFIG_COUNT, '1');
  assert.is(r.env.GIT_CONFIG_KEY_0, 'http.https://git.example:8443/.extraHeader');
  assert.is(r.env.GIT_CONFIG_VALUE_0, `Authorization: Basic ${Buffer.from('bot:s3cr@t').toString('base64')}`);
});

remote('git-remote :: plain URLs, scp-like remotes and local paths', () => {
  assert.equal(parseRemote('https://github.com/space-wizards/space-station-14'), {
    url: 'https://github.com/space-wizards/space-station-14',
    display: 'https://github.com/space-wizards/space-station-14',
    env: {},
  });
  assert.is(parseRemote('git@github.com:org/repo.git').url, 'git@github.com:org/repo.git');
  assert.is(parseRemote('/srv/repos/game.git').url, 'file:///srv/repos/game.git');
  assert.is(parseRemote('repos/game.git', '/srv').url, 'file:///srv/repos/game.git');
  assert.is(parseRemote('../game.git', '/srv/wd').display, '/srv/game.git');
});

remote('git-remote :: the fork id is BaseUrl as written, without credentials', () => {
  assert.is(
    forkIdOf('https://github.com/space-wizards/space-station-14'),
    'https://github.com/space-wizards/space-station-14',
  );
  assert.is(forkIdOf(' git@github.com:org/repo.git '), 'git@github.com:org/repo.git');
  assert.is(
    forkIdOf('repos/game.git'),
    'repos/game.git',
    'a local path as configured, as the real watchdog reports it',
  );
  assert.is(forkIdOf('https://bot:s3cr%40t@git.example:8443/org/game.git'), 'https://git.example:8443/org/game.git');
  assert.is(forkIdOf('https://bot@git.example/org/game.git'), 'https://git.example/org/game.git');
});

remote('git-remote :: refuses what cannot be used safely', () => {
  assert.throws(
    () => parseRemote(undefined),
    (e: unknown) => e instanceof UpdateError && /Updates\.BaseUrl/.test(e.message),
  );
  assert.throws(() => parseRemote('--upload-pack=evil'), isUpdateError);
  assert.throws(
    () => parseRemote('ssh://user:pw@host/repo'),
    (e: unknown) => e instanceof UpdateError && !/pw@/.test(e.message),
  );
  for (const bad of ['-x', 'a..b', 'a b', 'x:y', '']) assert.throws(() => checkBranch(bad), isUpdateError, bad);
  assert.is(checkBranch('release/v1.2'), 'release/v1.2');
});

remote('git-remote :: the git environment drops GIT_* and stops discovery at the instance folder', () => {
  process.env.GIT_DIR = '/elsewhere/.git';
  try {
    const env = gitEnv('/srv/instances/alpha', { EXTRA: '1' });
    assert.is(env.GIT_DIR, undefined);
    assert.is(env.GIT_CEILING_DIRECTORIES, '/srv/instances/alpha');
    assert.is(env.GIT_TERMINAL_PROMPT, '0');
    assert.is(env.EXTRA, '1');
    assert.is(env.PATH, process.env.PATH);
  } finally {
    delete process.env.GIT_DIR;
  }
});

remote('git-remote :: git really sends the credentials as Basic auth to a loopback remote', async () => {
  const seen: Array<{ url: string | undefined; auth: string | undefined }> = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url, auth: req.headers.authorization });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const tmp = await tempDir();
  try {
    const { port } = server.address() as AddressInfo;
    const r = parseRemote(`http://bot:t0ken@127.0.0.1:${port}/game.git`);
    const ctx = {
      instanceDir: tmp.path,
      sourceDir: `${tmp.path}/source`,
      remote: r,
      branch: 'master',
      timeouts: { ...DEFAULT_GIT_TIMEOUTS, checkMs: 10_000 },
      log: recordingLogger(),
    };
    const err = await rejects(remoteHead(ctx, never()), /git ls-remote .* exited with code/);
    assert.not.match(err.message, /t0ken/);
    assert.ok(seen.length > 0, 'git asked the loopback server');
    assert.match(seen[0]?.url ?? '', /^\/game\.git\/info\/refs/);
    assert.is(seen[0]?.auth, `Basic ${Buffer.from('bot:t0ken').toString('base64')}`);
  } finally {
    server.close();
    await tmp.cleanup();
  }
});

remote.run();
