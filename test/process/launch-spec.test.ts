import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildLaunchSpec, generateSecret, inheritedEnv, TOKEN_ENV } from '../../src/process/launch-spec.ts';
import { instanceFor } from '../_support/fixture-servers.ts';

const spec = suite('launch-spec');

spec('launch-spec :: arguments in the real watchdog order, then Arguments, then provider cvars', () => {
  const instance = instanceFor('/srv/wd/instances/alpha', '/srv/wd/instances/alpha/bin/Robust.Server', {
    args: ['--cvar', 'game.hostname=Alpha', '--cvar', 'build.hash=OLD'],
  });
  const s = buildLaunchSpec({
    key: 'alpha',
    instance,
    baseUrl: 'http://localhost:5000/',
    secret: 'S3CR3T+/=',
    env: {},
    providerCvars: [
      ['build.hash', 'ABC'],
      ['build.download_url', 'http://x/y.zip'],
    ],
  });
  assert.is(s.program, '/srv/wd/instances/alpha/bin/Robust.Server');
  assert.is(s.cwd, '/srv/wd/instances/alpha');
  assert.equal(s.args, [
    '--cvar',
    'watchdog.key=alpha',
    '--cvar',
    'watchdog.baseUrl=http://localhost:5000/',
    '--config-file',
    '/srv/wd/instances/alpha/config.toml',
    '--data-dir',
    '/srv/wd/instances/alpha/data',
    '--cvar',
    'game.hostname=Alpha',
    '--cvar',
    'build.hash=OLD',
    '--cvar',
    'build.hash=ABC',
    '--cvar',
    'build.download_url=http://x/y.zip',
  ]);
  assert.not.ok(
    s.args.some((a) => a.includes('S3CR3T')),
    'the secret never goes on the command line',
  );
});

spec('launch-spec :: environment = daemon env, then the token, then EnvironmentVariables (which win)', () => {
  const instance = instanceFor('/srv/alpha', '/srv/alpha/bin/server', { env: { CUSTOM: 'x', PATH: '/custom/bin' } });
  const s = buildLaunchSpec({
    key: 'alpha',
    instance,
    baseUrl: 'http://h/',
    secret: 'tok',
    providerCvars: [],
    env: { PATH: '/usr/bin', HOME: '/root', UNSET: undefined },
  });
  assert.equal(s.env, { PATH: '/custom/bin', HOME: '/root', [TOKEN_ENV]: 'tok', CUSTOM: 'x' });
  assert.is(TOKEN_ENV, 'ROBUST_CVAR_watchdog__token');
  const overridden = buildLaunchSpec({
    key: 'alpha',
    instance: instanceFor('/srv/alpha', '/srv/alpha/bin/server', { env: { [TOKEN_ENV]: 'mine' } }),
    baseUrl: 'http://h/',
    secret: 'tok',
    providerCvars: [],
    env: {},
  });
  assert.is(overridden.env[TOKEN_ENV], 'mine', 'as in the real watchdog, an operator entry of the same name wins');
});

spec('launch-spec :: a relative program resolves against the instance folder', () => {
  const instance = { ...instanceFor('/srv/alpha', 'bin/Robust.Server') };
  const s = buildLaunchSpec({ key: 'alpha', instance, baseUrl: 'http://h/', secret: 't', providerCvars: [], env: {} });
  assert.is(s.program, '/srv/alpha/bin/Robust.Server');
});

spec('launch-spec :: secrets are 64 random bytes in standard base64, new every time', () => {
  const a = generateSecret();
  const b = generateSecret();
  assert.is(a.length, 88);
  assert.match(a, /^[A-Za-z0-9+/]+={0,2}$/);
  assert.is(Buffer.from(a, 'base64').length, 64);
  assert.is.not(a, b);
  assert.not.match(a, /:/);
});

spec('launch-spec :: a server inherits no control token, and in Agones mode not the SDK address either', () => {
  const daemon = { PATH: '/bin', WATCHDOG_TOKEN: 'cli', AGONES_SDK_HTTP_PORT: '9358', AGONES_SDK_GRPC_PORT: '9357' };
  assert.equal(inheritedEnv(daemon, { agones: false }), {
    PATH: '/bin',
    AGONES_SDK_HTTP_PORT: '9358',
    AGONES_SDK_GRPC_PORT: '9357',
  });
  assert.equal(inheritedEnv(daemon, { agones: true }), { PATH: '/bin' }, 'one voice per GameServer: the daemon speaks');
  assert.is(daemon.AGONES_SDK_HTTP_PORT, '9358', 'the daemon keeps its own environment');
  const own = buildLaunchSpec({
    key: 'alpha',
    instance: instanceFor('/srv/alpha', '/srv/alpha/bin/server', { env: { AGONES_SDK_HTTP_PORT: '1' } }),
    baseUrl: 'http://h/',
    secret: 's',
    providerCvars: [],
    env: inheritedEnv(daemon, { agones: true }),
  });
  assert.is(own.env.AGONES_SDK_HTTP_PORT, '1', "an instance's EnvironmentVariables still set it");
});

spec.run();
