/**
 * Where maintenance shows: the control routes' `?when=`, hold and release (HTTP and the dashboard's
 * API), the status line of `watchdog status`, the dashboard card, and the /metrics gauges; against a memory
 * instance whose maintenance status the test sets.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { maintenanceLine } from '../../src/cli/client/status-table.ts';
import { createApp } from '../../src/http/app.ts';
import type { MaintenanceStatus } from '../../src/supervisor/status.ts';
import { fromLoopback, type MemoryInstance, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';
import { parseExposition, sample } from './_support/metrics.ts';

const NOW = Date.parse('2026-11-25T12:00:00Z');

/** A restart pending by schedule, held for two hours from `base` (ms). */
const heldFrom = (base: number): MaintenanceStatus => {
  const at = (ms: number) => new Date(base + ms).toISOString();
  return {
    policy: 'Empty',
    pending: {
      action: 'restart',
      source: 'schedule',
      when: 'Empty',
      since: at(-60_000),
      deadline: at(3_600_000),
      waitingFor: 'hold',
    },
    nextRestart: at(86_400_000),
    nextUpdateCheck: at(900_000),
    staged: null,
    hold: { reason: 'tournament', since: at(-60_000), until: at(7_200_000) },
  };
};
const HELD = heldFrom(NOW);

/** A memory instance that reports `maintenance` and records hold, release and `when`. */
function maintained(maintenance: MaintenanceStatus): MemoryInstance & { held: boolean } {
  const inst = memoryInstance('alpha', { apiToken: 't' }) as MemoryInstance & { held: boolean };
  const status = inst.status;
  inst.held = maintenance.hold !== null;
  inst.status = () => ({ ...status(), maintenance: { ...maintenance, hold: inst.held ? maintenance.hold : null } });
  inst.control = (action, opts) => void inst.calls.push(`control:${action}:${opts?.when ?? '-'}`);
  inst.hold = (minutes, reason) => {
    inst.held = true;
    inst.calls.push(`hold:${minutes}:${reason}`);
    return null;
  };
  inst.release = () => {
    const was = inst.held;
    inst.held = false;
    return was;
  };
  return inst;
}

function app(inst: MemoryInstance) {
  return fromLoopback(
    createApp({ registry: memoryRegistry(inst), bus: createBus(), log: recordingLogger(), version: 'test' }),
  );
}

const auth = { authorization: `Basic ${Buffer.from('alpha:t').toString('base64')}` };
const post = (a: ReturnType<typeof app>, path: string, headers: Record<string, string> = auth) =>
  a.request(path, { method: 'POST', headers });

// ---

const routes = suite('maintenance :: control routes');

routes(
  'maintenance :: ?when= goes to restart and update; an unknown policy or action is refused with 400',
  async () => {
    const inst = maintained({ ...HELD, hold: null, pending: null });
    const a = app(inst);
    assert.is((await post(a, '/instances/alpha/restart?when=Empty')).status, 200);
    assert.is((await post(a, '/instances/alpha/update?when=Now')).status, 200);
    assert.is((await post(a, '/instances/alpha/restart')).status, 200);
    const bad = await post(a, '/instances/alpha/restart?when=Soon');
    assert.is(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, 'Now, RoundEnd, Empty');
    assert.is((await post(a, '/instances/alpha/stop?when=Now')).status, 400);
    assert.equal(inst.calls, ['control:restart:Empty', 'control:update:Now', 'control:restart:-']);
  },
);

routes('maintenance :: hold takes minutes and a reason; release answers 409 when nothing is held', async () => {
  const inst = maintained({ ...HELD, hold: null });
  const a = app(inst);
  assert.is((await post(a, '/instances/alpha/hold?minutes=90&reason=finals')).status, 200);
  assert.is((await post(a, '/instances/alpha/hold?minutes=-1')).status, 400);
  assert.is((await post(a, '/instances/alpha/hold', {})).status, 401, 'the same Basic auth as control');
  assert.is((await post(a, '/instances/alpha/release')).status, 200);
  assert.is((await post(a, '/instances/alpha/release')).status, 409);
  assert.equal(inst.calls, ['hold:90:finals']);
  // The dashboard's own route holds for an hour.
  const dash = await post(a, '/api/instances/alpha/hold', { 'X-Watchdog-Dashboard': '1' });
  assert.is(dash.status, 200);
  assert.match(inst.calls[1] ?? '', /^hold:60:held from the dashboard/);
  assert.is((await post(a, '/api/instances/alpha/release', { 'X-Watchdog-Dashboard': '1' })).status, 200);
  assert.is((await post(a, '/api/instances/alpha/release', { 'X-Watchdog-Dashboard': '1' })).status, 409);
});

routes.run();

// ---

const views = suite('maintenance :: status line, card and metrics');

views('maintenance :: watchdog status prints a line with what is pending, the hold and the next times', () => {
  const line = maintenanceLine({ key: 'alpha', state: 'server.running', maintenance: HELD }, NOW);
  assert.is(
    line,
    'alpha maintenance: restart held (schedule, Empty) since 1m ago, forced in 1h; held until 2026-11-25T14:00:00.000Z (in 2h): tournament; next restart in 1d; next update check in 15m',
  );
  const staged = { ...HELD, staged: '42' };
  assert.match(
    maintenanceLine({ key: 'alpha', state: 'server.running', maintenance: staged }, NOW) ?? '',
    /since 1m ago, forced in 1h; update 42 downloaded and staged; held until/,
  );
  const none = { ...HELD, pending: null, hold: null, nextRestart: null, nextUpdateCheck: null };
  assert.is(maintenanceLine({ key: 'alpha', state: 'server.running', maintenance: none }, NOW), null);
});

views('maintenance :: the card shows a maintenance line, and Hold turns into Release while held', async () => {
  // The page is rendered at the daemon's time.
  const live = heldFrom(Date.now());
  const page = async (m: MaintenanceStatus) => (await app(maintained(m)).request('/')).text();
  const held = await page(live);
  assert.match(held, /<dd data-field="maintenance">held for (1 h 59 min|2 h 0 min): tournament<\/dd>/);
  assert.match(held, /<button type="button" data-action="hold"[^>]*>Release<\/button>/);
  const waiting = await page({
    ...live,
    hold: null,
    pending: { ...HELD.pending!, deadline: live.pending!.deadline, waitingFor: 'Empty' },
  });
  assert.match(waiting, /<dd data-field="maintenance">restart waits for 0 players, forced in (59 min|1 h)/);
  assert.match(waiting, /<button type="button" data-action="hold"[^>]*>Hold<\/button>/);
  const staged = await page({ ...live, staged: '42' });
  assert.match(staged, /<dd data-field="maintenance">held for [^<]*: tournament \(update 42 staged\)<\/dd>/);
});

views('maintenance :: /metrics has the pending gauge and the next scheduled times', async () => {
  const a = app(maintained(HELD));
  const f = parseExposition(await (await a.request('/metrics')).text());
  assert.is(sample(f, 'watchdog_maintenance_pending', { instance: 'alpha' }), 1);
  assert.is(
    sample(f, 'watchdog_maintenance_next_scheduled_timestamp_seconds', { instance: 'alpha', what: 'restart' }),
    (NOW + 86_400_000) / 1000,
  );
  assert.is(
    sample(f, 'watchdog_maintenance_next_scheduled_timestamp_seconds', { instance: 'alpha', what: 'update-check' }),
    (NOW + 900_000) / 1000,
  );
  const idle = app(maintained({ ...HELD, pending: null, nextRestart: null }));
  const g = parseExposition(await (await idle.request('/metrics')).text());
  assert.is(sample(g, 'watchdog_maintenance_pending', { instance: 'alpha' }), 0);
  assert.is(
    sample(g, 'watchdog_maintenance_next_scheduled_timestamp_seconds', { instance: 'alpha', what: 'restart' }),
    undefined,
  );
});

views.run();
