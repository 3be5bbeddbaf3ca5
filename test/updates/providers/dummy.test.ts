import { readdir } from 'node:fs/promises';
import * as assert from 'uvu/assert';
import { createDummyProvider } from '../../../src/updates/providers/dummy.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { instanceSuite, never as live, rejects } from '../_support/instance-suite.ts';

const dummy = instanceSuite('dummy', { instance: 'empty' });

dummy('dummy :: counts 1, 2, 3 and always has an update', async (ctx) => {
  const provider = createDummyProvider(providerContext({ dir: ctx.inst, settings: { UpdateType: 'Dummy' } }));
  assert.is(provider.type, 'Dummy');
  let revision: string | null = null;
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const check = await provider.check(revision, live());
    assert.ok(check.available);
    revision = await provider.apply(revision, live());
    assert.is(check.revision, revision);
    seen.push(revision);
  }
  assert.equal(seen, ['1', '2', '3']);
  assert.is(await provider.apply('41', live()), '42');
  assert.is(await provider.apply('9007199254740993', live()), '9007199254740994', 'no float rounding');
  assert.equal(await readdir(ctx.inst), [], 'touches no files');
  assert.is(provider.launchCvars, undefined);
});

dummy('dummy :: a non-integer revision counts as 0, with a warning instead of an exception', async () => {
  const ctx = providerContext({ dir: '/nonexistent', settings: { UpdateType: 'Dummy' } });
  const provider = createDummyProvider(ctx);
  assert.equal(await provider.check('2024-01-01T00:00:00Z', live()), { available: true, revision: '1' });
  assert.is(await provider.apply('2024-01-01T00:00:00Z', live()), '1');
  assert.is(await provider.apply('-3', live()), '1');
  const warnings = ctx.log.records.filter((r) => r.level === 'warn');
  assert.is(warnings.length, 2, 'one warning per odd revision, not per call');
  assert.match(warnings[0]?.msg ?? '', /not a whole number/);
  assert.is(warnings[0]?.fields?.revision, '2024-01-01T00:00:00Z');
});

dummy('dummy :: a cancelled apply is an UpdateError', async () => {
  const provider = createDummyProvider(providerContext({ dir: '/nonexistent', settings: { UpdateType: 'Dummy' } }));
  const ac = new AbortController();
  ac.abort();
  await rejects(provider.apply('1', ac.signal), /cancelled/);
});

dummy.run();
