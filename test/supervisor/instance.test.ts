/**
 * The supervisor's Instance around the statechart: control requests become machine events, the machine's
 * emitted facts become log lines, and what the HTTP layer reads (state, stopRequested, the check-in secret) comes
 * from the machine's snapshot. No server is launched here: the update check is held open, so the instance stays
 * `updating` until told otherwise.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../../src/config/resolved.ts';
import { createInstance, type Instance } from '../../src/supervisor/instance.ts';
import type { UpdateProvider } from '../../src/updates/provider.ts';
import { waitFor } from '../_support/env.ts';
import { type RecordingLogger, recordingLogger } from '../http/_support/app.ts';

const config = {
  persistServers: false,
  timing: {
    ShutdownRequestSeconds: 1,
    ShutdownExitSeconds: 1,
    BackoffInitialSeconds: 1,
    BackoffMaxSeconds: 2,
    StableRunSeconds: 60,
    StartupFailureLimit: 3,
    WebhookRetries: 0,
    WebhookRetryBaseSeconds: 1,
    WebhookTimeoutSeconds: 1,
    DumpTimeoutSeconds: 1,
    RejectedCheckinLogSeconds: 60,
  },
} as unknown as ResolvedConfig;

const instance = {
  key: 'alpha',
  name: 'alpha',
  dir: '/nonexistent/alpha',
  apiToken: 't',
  program: '/nonexistent/alpha/bin/server',
  settings: { TimeoutSeconds: 10, ApiPort: 1, Backups: { BeforeUpdate: true }, Retention: {} },
} as unknown as ResolvedInstance;

/** A provider whose check answers only when the test says so (or is aborted). */
function heldProvider() {
  let answer: ((available: boolean) => void) | undefined;
  const provider: UpdateProvider = {
    type: 'Held',
    check: (_current, signal) =>
      new Promise((resolve, reject) => {
        answer = (available) => resolve({ available });
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      }),
    apply: () => Promise.reject(new Error('no build')),
  };
  return { provider, answer: (available: boolean) => answer?.(available) };
}

interface Ctx {
  log: RecordingLogger;
  held: ReturnType<typeof heldProvider>;
  rollbacks: number;
  rollback: () => Promise<string | null>;
  inst: Instance;
}

const test = suite<Ctx>('supervisor instance', {} as Ctx);
test.before.each((ctx) => {
  ctx.log = recordingLogger('alpha');
  ctx.held = heldProvider();
  ctx.rollbacks = 0;
  ctx.rollback = () => {
    ctx.rollbacks += 1;
    return Promise.reject(new Error('cannot roll back: there is no previous build (bin.prev)'));
  };
  ctx.inst = createInstance({
    config,
    instance,
    bus: createBus(),
    log: ctx.log,
    baseUrl: 'http://127.0.0.1:5000',
    provider: ctx.held.provider,
    revision: 'r1',
    recordRevision: async () => undefined,
    recordLaunch: async () => undefined,
    rollback: () => ctx.rollback(),
    adoptable: () => null,
  });
  ctx.inst.start(null);
});
test.after.each(async (ctx) => {
  await ctx.inst.shutdown(false, 2000);
});

const logged = (log: RecordingLogger, pattern: RegExp) => log.lines.some((l) => pattern.test(l));

test('instance :: a rollback while updating is refused, and the refusal is logged with its reason', ({
  log,
  inst,
  ...ctx
}) => {
  assert.is(inst.status().state, 'updating');
  inst.control('rollback');
  assert.is(inst.status().state, 'updating');
  assert.ok(logged(log, /^warn \[alpha\] rollback refused: an update is being installed/), log.lines.join('\n'));
  assert.is(ctx.rollbacks, 0, 'bin/ was not touched');
});

test('instance :: status reads the machine: a stop request, no check-in secret without a server', async (ctx) => {
  assert.is(ctx.inst.checkinSecret(), undefined);
  ctx.inst.control('stop');
  assert.is(ctx.inst.status().stopRequested, true);
  ctx.held.answer(false);
  await waitFor('stopped.idle', () => ctx.inst.status().state === 'stopped.idle', 10_000);
  assert.is(ctx.inst.status().stopRequested, true);
  assert.is(ctx.inst.checkinSecret(), undefined);
});

test('instance :: a failed rollback of a stopped instance is logged and leaves it stopped', async (ctx) => {
  ctx.inst.control('stop');
  ctx.held.answer(false);
  await waitFor('stopped.idle', () => ctx.inst.status().state === 'stopped.idle', 10_000);
  ctx.inst.control('rollback');
  await waitFor('the rollback to fail', () => logged(ctx.log, /^error \[alpha\] rollback failed/), 10_000);
  assert.is(ctx.rollbacks, 1);
  assert.is(ctx.inst.status().state, 'stopped.idle');
  assert.ok(logged(ctx.log, /no previous build/));
});

test('instance :: a reload makes the update provider anew only when its settings changed', async (ctx) => {
  const made: Array<UpdateProvider | null> = [];
  const factory = (provider: UpdateProvider | null) => () => {
    made.push(provider);
    return provider;
  };
  const withSettings = (settings: Record<string, unknown>) =>
    ({ ...instance, settings: { ...instance.settings, ...settings } }) as unknown as ResolvedInstance;
  ctx.inst.reconfigure(config, withSettings({ TimeoutSeconds: 20 }), factory(null));
  assert.is(made.length, 0, 'a timeout change keeps the provider');
  assert.is(ctx.inst.status().canUpdate, true);
  const manifest = { UpdateType: 'Manifest', Updates: { ManifestUrl: 'http://127.0.0.1:1/a.json' } };
  ctx.inst.reconfigure(config, withSettings(manifest), factory(heldProvider().provider));
  assert.is(made.length, 1, 'a new UpdateType makes a new provider');
  ctx.inst.reconfigure(config, withSettings({ ...manifest, TimeoutSeconds: 30 }), factory(null));
  assert.is(made.length, 1, 'the same Updates keep it');
  ctx.inst.reconfigure(
    config,
    withSettings({ ...manifest, Updates: { ManifestUrl: 'http://127.0.0.1:1/b.json' } }),
    factory(null),
  );
  assert.is(made.length, 2, 'a changed Updates key makes it anew');
  assert.is(ctx.inst.status().canUpdate, false, 'and the new one (none) is in use');
});

test.run();
