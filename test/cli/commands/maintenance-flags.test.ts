/**
 * The CLI's maintenance flags: `--for` of `watchdog hold` (durationMinutes) and `--when` of
 * `watchdog restart|update`. The real CLI posts to a strict loopback stand-in for the daemon that records what it
 * is asked and answers only the control routes of instance `demo` with its token.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { control } from '../../../src/cli/commands/control.ts';
import { durationMinutes, hold } from '../../../src/cli/commands/hold.ts';
import { UsageError } from '../../../src/errors.ts';
import { runMain, standIn } from '../../_support/cli.ts';
import { basic } from '../../_support/daemon.ts';

const duration = suite('watchdog hold :: --for durations');

duration(
  'maintenance-flags :: durationMinutes: s, m, h, d or plain minutes, any case, fractions; anything else is null',
  () => {
    const ok: Array<[string, number]> = [
      ['2h', 120],
      ['90s', 1.5],
      ['45m', 45],
      ['1d', 1440],
      ['30', 30],
      ['1.5h', 90],
      [' 2H ', 120],
      ['10 m', 10],
    ];
    for (const [text, minutes] of ok) assert.is(durationMinutes(text), minutes, text);
    for (const bad of ['', '0', '0m', '0.0h', '-1h', 'abc', '2w', '2h30m', '1e3', 'h', '.5h', '2.h'])
      assert.is(durationMinutes(bad), null, JSON.stringify(bad));
  },
);

duration.run();

interface Ctx {
  url: string;
  cwd: string;
  requests: string[];
  close: () => Promise<void>;
}
const flags = suite<Ctx>('watchdog CLI :: --when and --for reach the daemon', {
  url: '',
  cwd: '',
  requests: [],
  close: async () => {},
});

flags.before(async (ctx) => {
  const daemon = await standIn((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const routed =
      req.method === 'POST' && /^\/instances\/demo\/(restart|update|hold|restore|rollback)$/.test(u.pathname);
    if (!routed) return res.writeHead(404).end();
    if (req.headers.authorization !== basic('demo', 'tok')) return res.writeHead(401).end();
    ctx.requests.push(`${u.pathname}${u.search}`);
    res.writeHead(200).end();
  }, 'wd-cli-maint-');
  Object.assign(ctx, daemon);
});
flags.after((ctx) => ctx.close());

const cli = (ctx: Ctx, args: string[]) => runMain([...args, '--url', ctx.url, '--token', 'tok'], { cwd: ctx.cwd });

flags('maintenance-flags :: --when, --now, --with-data and --for reach the daemon as query parameters', async (ctx) => {
  const runs = await Promise.all([
    cli(ctx, ['restart', 'demo', '--when', 'RoundEnd']),
    cli(ctx, ['hold', 'demo', '--for', '2h', '--reason', 'cup final']),
    cli(ctx, ['restore', 'demo', '20261128T060000Z-r1', '--now']),
    cli(ctx, ['rollback', 'demo', '--with-data']),
  ]);
  assert.equal(
    runs.map((r) => r.code),
    [0, 0, 0, 0],
    runs.map((r) => r.stderr).join(''),
  );
  assert.match(runs[1]?.stdout ?? '', /maintenance of demo held until \d{4}-\d\d-\d\dT/);
  assert.equal([...ctx.requests].sort(), [
    '/instances/demo/hold?minutes=120&reason=cup+final',
    '/instances/demo/restart?when=RoundEnd',
    '/instances/demo/restore?when=Now&backup=20261128T060000Z-r1',
    '/instances/demo/rollback?withData=true',
  ]);
});

flags(
  'maintenance-flags :: a bad --when, --when on stop and a bad --for are usage errors before any request',
  async (ctx) => {
    const usage = async (run: Promise<number>, message: string) => {
      const err = await run.then(
        () => null,
        (e: unknown) => e,
      );
      assert.instance(err, UsageError);
      assert.match((err as Error).message, message);
    };
    const target = ['--url', ctx.url, '--token', 'tok'];
    const before = ctx.requests.length;
    await usage(
      control('update')(['demo', '--when', 'Later', ...target]),
      '--when takes Now, RoundEnd, Empty, not "Later"',
    );
    await usage(
      control('stop')(['demo', '--when', 'Now', ...target]),
      '--when goes with restart, update and restore only',
    );
    await usage(hold(['demo', '--for', '2w', ...target]), '--for takes a duration such as 30m, 2h or 1d, not "2w"');
    await usage(control('restore')(['demo', ...target]), 'missing the backup to restore');
    await usage(control('restore')(['demo', 'b1', '--now', '--when', 'Now', ...target]), '--now or --when, not both');
    await usage(control('rollback')(['demo', '--now', ...target]), '--now goes with restore only');
    await usage(control('restart')(['demo', '--with-data', ...target]), '--with-data goes with rollback only');
    assert.is(ctx.requests.length, before, 'nothing was sent');
  },
);

flags.run();
