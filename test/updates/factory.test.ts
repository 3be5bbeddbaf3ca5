import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UPDATE_TYPES } from '../../src/config/schema.ts';
import { createProvider } from '../../src/updates/factory.ts';
import { providerContext } from '../fixtures/git/context.ts';

const factory = suite('factory');

const UPDATES = {
  ManifestUrl: 'http://127.0.0.1:1/manifest.json',
  BaseUrl: 'http://127.0.0.1:1/',
  JobName: 'server',
  CurrentVersion: 'v1',
};

factory('factory :: each UpdateType gets its provider', () => {
  for (const type of UPDATE_TYPES) {
    const provider = createProvider(providerContext({ dir: '/nonexistent', settings: { UpdateType: type, Updates: UPDATES } }));
    assert.ok(provider, `a provider for ${type}`);
    assert.is(provider.type, type);
    assert.type(provider.check, 'function');
    assert.type(provider.apply, 'function');
  }
});

factory('factory :: no UpdateType means no provider', () => {
  assert.is(createProvider(providerContext({ dir: '/nonexistent' })), null);
});

factory('factory :: providers that host the client add launch cvars', () => {
  const withCvars = (type: (typeof UPDATE_TYPES)[number]) =>
    typeof createProvider(providerContext({ dir: '/x', settings: { UpdateType: type, Updates: UPDATES } }))?.launchCvars === 'function';
  assert.ok(withCvars('Local'));
  assert.ok(withCvars('Git'));
  assert.not.ok(withCvars('Dummy'));
});

factory.run();
