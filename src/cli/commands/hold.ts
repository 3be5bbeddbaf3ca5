import { UsageError } from '../../errors.ts';
import { instanceKeyArg, parseCommandArgs } from '../client/args.ts';
import { fetchStatus, postControl } from '../client/http.ts';
import { atInstance, TARGET_FLAGS, TARGET_USAGE, targetOf } from '../client/target.ts';
import type { Command, CommandOptions } from '../registry.ts';

export const holdUsage = `usage: watchdog hold <key> [--for D] [--reason R] [--url URL] [--token T] [--config F]
  Holds scheduled restarts and automatic update installs (Maintenance) until the hold ends by itself or
  \`watchdog release <key>\`; crash and hang handling go on. A restart or update asked for with a moment goes ahead.
  A new hold replaces the one in place, even a longer one (the command says so).
  --for D       how long: 90s, 45m, 2h, 1d or minutes as a number (default 1h)
  --reason R    shown in the status and on the dashboard
${TARGET_USAGE}`;

export const releaseUsage = `usage: watchdog release <key> [--url URL] [--token T] [--config F]
  Ends a hold now; what it held back goes ahead by the instance's policy.
${TARGET_USAGE}`;

export const holdOptions = {
  ...TARGET_FLAGS,
  for: { type: 'string' },
  reason: { type: 'string' },
} as const satisfies CommandOptions;
export const releaseOptions = { ...TARGET_FLAGS } as const satisfies CommandOptions;

const UNIT_MINUTES: Record<string, number> = { s: 1 / 60, m: 1, h: 60, d: 1440 };

/** `2h` → 120; `90s` → 1.5; a plain number is minutes. Null when it is not a positive duration. */
export function durationMinutes(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/i.exec(text.trim());
  if (!m) return null;
  const minutes = Number(m[1]) * (UNIT_MINUTES[(m[2] || 'm').toLowerCase()] ?? 1);
  return minutes > 0 ? minutes : null;
}

/** `watchdog hold <key> [--for 2h] [--reason …]`: POST /instances/<key>/hold?minutes=…&reason=…. */
export const hold: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, holdOptions, holdUsage);
  const [key] = instanceKeyArg(positionals, holdUsage);
  const minutes = values.for === undefined ? 60 : durationMinutes(values.for);
  if (minutes === null)
    throw new UsageError(`--for takes a duration such as 30m, 2h or 1d, not "${values.for ?? ''}"\n${holdUsage}`);
  const query = { minutes: String(minutes), ...(values.reason === undefined ? {} : { reason: values.reason }) };
  const held = await atInstance(targetOf('hold', values), key, async (ep) => {
    // The status reads only improve the message: the hold is taken whether or not they answer.
    const current = () =>
      fetchStatus(ep)
        .then((s) => s.maintenance?.hold ?? null)
        .catch(() => null);
    const before = await current();
    await postControl(ep, 'hold', query);
    return { before, after: await current(), url: ep.url };
  });
  // The daemon's own end time: a clock computed here would differ by the request's round trip, or by more.
  const until = held.after?.until ?? new Date(Date.now() + minutes * 60_000).toISOString();
  const shortened =
    held.before && Date.parse(held.before.until) > Date.parse(until)
      ? ` (shortened: the hold it replaces ran until ${held.before.until})`
      : '';
  process.stdout.write(`maintenance of ${key} held until ${until} at ${held.url}${shortened}\n`);
  return 0;
};

/** `watchdog release <key>`: POST /instances/<key>/release (409, exit 1, when nothing is held). */
export const release: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, releaseOptions, releaseUsage);
  const [key] = instanceKeyArg(positionals, releaseUsage);
  const url = await atInstance(targetOf('release', values), key, async (ep) => {
    await postControl(ep, 'release');
    return ep.url;
  });
  process.stdout.write(`maintenance of ${key} released at ${url}\n`);
  return 0;
};
