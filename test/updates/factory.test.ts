import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UPDATE_TYPES } from '../../src/config/schema.ts';
import { createProvider } from '../../src/updates/factory.ts';
import { providerContext } from '../fixtures/git/context.ts';
import { never, rejects } from './_support/instance-suite.ts';

const factory = suite('factory');

const UPDATES = {
  ManifestUrl: 'http://127.0.0.1:1/manifest.json',
  BaseUrl: 'http://127.0.0.1:1/',
  JobName: 'server',
  CurrentVersion: 'v1',
};

factory('factory :: each UpdateType gets its provider', () => {
  for (const type of UPDATE_TYPES) {
    const provider = createProvider(
      providerContext({ dir: '/nonexistent', settings: { UpdateType: type, Updates: UPDATES } }),
    );
    assert.ok(provider, `a provider for ${type}`);
    assert.is(provider.type, type);
    assert.type(provider.check, 'function');
    assert.type(provider.apply, 'function');
  }
});

factory('factory :: no UpdateType means no provider', () => {
  assert.is(createProvider(providerContext({ dir: '/nonexistent' })), null);
});

factory('factory :: only providers that host the client add launch cvars', async () => {
  const cvars = (type: (typeof UPDATE_TYPES)[number], hybrid = true) =>
    createProvider(
      providerContext({ dir: '/x', settings: { UpdateType: type, Updates: { ...UPDATES, HybridACZ: hybrid } } }),
    )?.launchCvars?.('r1') ?? Promise.resolve([]);
  assert.equal(await cvars('Dummy'), []);
  assert.equal(await cvars('Manifest'), []);
  assert.equal(await cvars('CiServer'), []);
  assert.equal(await cvars('Git'), [], 'a hybrid Git build hosts no client');
  // Local and non-hybrid Git point the client at the zip they serve; with none in binaries/ they say so.
  for (const [type, hybrid] of [
    ['Local', true],
    ['Git', false],
  ] as const) {
    const err = await cvars(type, hybrid).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(err, Error, `${type} looks for the client zip it serves`);
    assert.match((err as Error).message, /client zip/);
  }
});

factory('factory :: the provider made answers as the provider itself does', async () => {
  const ctx = (type: (typeof UPDATE_TYPES)[number]) =>
    providerContext({ dir: '/nonexistent', settings: { UpdateType: type, Updates: UPDATES } });
  const signal = never();
  const manifest = createProvider(ctx('Manifest'));
  // Nothing listens on port 1: the Manifest provider's own error, with the URL it tried.
  await rejects(manifest!.check(null, signal), /manifest.*127\.0\.0\.1:1/);
  // Local's revision is its CurrentVersion, and its launch cvars need the client zip it serves.
  const local = createProvider(ctx('Local'));
  assert.equal(await local?.check(null, signal), { available: true, revision: 'v1' });
  await rejects(local!.launchCvars!('v1'), /client zip/);
});

factory.run();
