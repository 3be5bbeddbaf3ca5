/** Where a person sees the GameServer of an instance in Agones mode besides the status JSON. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agonesLine, renderStatusTable } from '../../src/cli/client/status-table.ts';
import { cardFields } from '../../src/http/dashboard/assets/card-view.js';
import type { InstanceStatus } from '../../src/supervisor/status.ts';

const test = suite('agones: status views');
const row: InstanceStatus = {
  key: 'game',
  name: 'game',
  state: 'server.running',
  pid: 42,
  revision: '7',
  lastCheckinAt: null,
  startedAt: null,
  startupFailures: 0,
  restarts: 0,
  stopRequested: false,
  uptimeSeconds: null,
  updatePending: false,
  lastExit: null,
};

test('watchdog status :: a GameServer line in Agones mode, none otherwise', () => {
  const agones = { gameServer: 'fleet-abc12', state: 'Allocated', ready: true };
  assert.is(agonesLine({ ...row, agones }), 'game agones: GameServer fleet-abc12 is Allocated');
  assert.is(
    agonesLine({ ...row, agones: { gameServer: null, state: null, ready: false } }),
    'game agones: GameServer (not reported yet) is not Ready yet',
  );
  assert.is(agonesLine(row), null);
  const table = renderStatusTable([{ ...row, agones }], { colour: false, now: Date.now() });
  assert.match(table, /\n\ngame agones: GameServer fleet-abc12 is Allocated\n$/);
  assert.not.match(renderStatusTable([row], { colour: false, now: Date.now() }), 'agones');
});

test('dashboard card :: the agones field, empty (its row hidden) when not in Agones mode', () => {
  const agones = { gameServer: 'fleet-abc12', state: 'Ready', ready: true };
  assert.is(cardFields({ ...row, agones }, Date.now()).agones, 'fleet-abc12: Ready');
  assert.is(cardFields(row, Date.now()).agones, '');
});

test.run();
