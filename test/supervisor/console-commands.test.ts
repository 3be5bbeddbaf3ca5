/**
 * Console commands on the maintenance schedules (src/supervisor/maintenance/schedule.ts) on a simulated
 * clock: a command on its own schedule, an announcement MinutesBefore each scheduled restart, none while held.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { SimulatedClock } from 'xstate';
import { MaintenanceSchema } from '../../src/config/sections/maintenance.ts';
import { createScheduledCommands } from '../../src/supervisor/maintenance/schedule.ts';

const test = suite('scheduled console commands');
const MIN = 60_000;
/** Minute by minute: the simulated clock fires a due timer with its time already at the end of the step. */
const advance = (clock: SimulatedClock, minutes: number) => {
  for (let i = 0; i < minutes; i++) clock.increment(MIN);
};

function scheduled(settings: unknown, held = () => false) {
  const clock = new SimulatedClock();
  const sent: string[] = [];
  const parsed = v.parse(MaintenanceSchema, { TimeZone: 'UTC', ...(settings as object) });
  const commands = createScheduledCommands({
    settings: () => parsed,
    send: (command, why) => sent.push(`${clock.now() / MIN} ${command} (${why})`),
    held,
    broken: (why) => assert.unreachable(why),
    clock,
  });
  commands.start();
  return { clock, sent, commands };
}

test('scheduled commands :: a command on its own schedule, at each fire, until stopped', () => {
  const { clock, sent, commands } = scheduled({ Commands: [{ Schedule: '*/10 * * * *', Command: 'say hello' }] });
  advance(clock, 25);
  assert.equal(sent, ['10 say hello (schedule */10 * * * *)', '20 say hello (schedule */10 * * * *)']);
  commands.stop();
  advance(clock, 60);
  assert.is(sent.length, 2, 'nothing after stop');
});

test('scheduled commands :: an announcement MinutesBefore each scheduled restart, none while held', () => {
  let held = false;
  const { clock, sent } = scheduled(
    {
      RestartSchedule: '0 * * * *',
      Announcements: [{ MinutesBefore: 5, Command: 'say Restart in 5 minutes' }],
    },
    () => held,
  );
  advance(clock, 61);
  assert.equal(sent, ['55 say Restart in 5 minutes (announcement 5 min before the scheduled restart)']);
  held = true;
  advance(clock, 60);
  assert.is(sent.length, 1, 'the held restart is not announced');
  held = false;
  advance(clock, 60);
  assert.equal(sent.at(-1), '175 say Restart in 5 minutes (announcement 5 min before the scheduled restart)');
});

test('scheduled commands :: announcements need a RestartSchedule', () => {
  const { clock, sent } = scheduled({ Announcements: [{ MinutesBefore: 5, Command: 'say never' }] });
  advance(clock, 24 * 60);
  assert.equal(sent, []);
});

test.run();
