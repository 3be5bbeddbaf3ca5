import { join } from 'node:path';
import { type Bus, subscribe } from '../bus.ts';
import { monotonicMs, wallTimeOf } from '../clock.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { answerCap } from '../config/sections/answers.ts';
import { consoleOf } from '../config/sections/console-hub.ts';
import { describeError } from '../errors.ts';
import { checkListing, createHubWatch, type HubWatch, hubSettingsOf } from '../hub/hub-watch.ts';
import type { Logger } from '../log.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { HubStatus } from '../supervisor/status.ts';

/** The engine's command that advertises to the hubs at once (RobustToolbox `AdvertiseNowCommand`). */
export const READVERTISE_COMMAND = 'hub_advertise_now';
/** A live server's state path ends so, whatever groups it (`running`, `server.running`, …`awaiting-checkin`). */
const RUNNING = /(^|\.)(running|awaiting-checkin)$/;

/**
 * Whether the hubs list each running server that advertises to them. Missing over `Hub.MissingMinutes`: the
 * re-advertise command (console on), one `hub` notice, with `Hub.RestartWhenMissing` a restart; back: one notice.
 */
export function startHubWatches(opts: {
  config: () => ResolvedConfig;
  bus: Bus;
  log: Logger;
  registry: InstanceRegistry;
}) {
  const { bus, log, registry } = opts;
  const watched = new Map<string, { watch: HubWatch; timer: NodeJS.Timeout }>();
  const instanceOf = (key: string) => opts.config().instances.find((i) => i.key === key);

  /** Starts whose settings are still being read, by key: a stop (or a newer start) in between cancels one. */
  const starting = new Map<string, object>();

  const stop = (key: string) => {
    starting.delete(key);
    const w = watched.get(key);
    if (w) clearInterval(w.timer);
    watched.delete(key);
  };

  const start = async (instance: ResolvedInstance) => {
    stop(instance.key);
    const hub = instance.settings.Hub;
    if (!hub.Watch) return;
    const token = {};
    starting.set(instance.key, token);
    const argv = ['--config-file', join(instance.dir, 'config.toml'), ...instance.settings.Arguments];
    const env = { ...process.env, ...instance.settings.EnvironmentVariables };
    const settings = await hubSettingsOf(argv, env).catch((err: unknown) => {
      const error = describeError(err);
      log.warn('cannot read the hub settings; not watching the hub listing', { key: instance.key, error });
      return null;
    });
    if (starting.get(instance.key) !== token) return;
    starting.delete(instance.key);
    if (settings === null) return;
    for (const problem of settings.problems) log.warn(`hub advertising will fail: ${problem}`, { key: instance.key });
    const key = instance.key;
    const notice = (message: string, reason?: string) =>
      bus.emit('instance:notice', { key, kind: 'hub', message, ...(reason ? { reason } : {}), at: Date.now() });
    const consoleOn = consoleOf(instance.settings.Console) !== null;
    const watch = createHubWatch({
      settings,
      missingAfterMs: hub.MissingMinutes * 60_000,
      now: monotonicMs,
      // A flat deadline, not tied to CheckSeconds: a late poll skips the next, and a short period must not turn a
      // slow answer into "not reached".
      check: (url, address) => checkListing(url, address, answerCap(opts.config().settings.Answers, 'Hub')),
      readvertise: consoleOn
        ? async () => {
            await registry.get(key)?.sendConsole?.(READVERTISE_COMMAND);
          }
        : undefined,
      reports: {
        readvertised: (url) => log.info(`not listed by ${url}: sent ${READVERTISE_COMMAND} to the server`, { key }),
        missing: (url, address, since, why) => {
          const minutes = Math.round((monotonicMs() - since) / 60_000);
          log.warn('the server is missing from a hub it advertises to', { key, hub: url, address, why: why ?? '' });
          notice(`Server \`${key}\` (${address}) has not been listed by ${url} for ${minutes} min`, why ?? undefined);
          if (!hub.RestartWhenMissing) return;
          const when = instance.settings.Maintenance?.When ?? 'RoundEnd';
          registry.get(key)?.control('restart', { when, by: 'the hub watch' });
        },
        back: (url, address, ms) => {
          log.info('the server is listed by the hub again', { key, hub: url, address });
          notice(`Server \`${key}\` is listed by ${url} again, after ${Math.round(ms / 60_000)} min`);
        },
      },
    });
    // Polls are never concurrent: one still running when the next is due is skipped.
    let polling = false;
    const timer = setInterval(() => {
      if (polling) return;
      polling = true;
      void watch.poll().finally(() => {
        polling = false;
      });
    }, hub.CheckSeconds * 1000);
    timer.unref();
    watched.set(key, { watch, timer });
  };

  const unsubscribe = subscribe(bus, {
    'instance:state': (e) => {
      const running = RUNNING.test(e.state);
      if (running && !watched.has(e.key) && !starting.has(e.key)) {
        const instance = instanceOf(e.key);
        if (instance) void start(instance);
      } else if (!running) stop(e.key);
    },
    'instance:log': (e) => watched.get(e.key)?.watch.line(e.line),
  });

  // The watch measures on the monotonic clock (a wall-clock step must not make an absence long or short).
  const iso = (ms: number | null) => (ms === null ? null : new Date(wallTimeOf(ms)).toISOString());
  return {
    /** null when `key` is not watched. */
    status(key: string): HubStatus | null {
      const w = watched.get(key);
      if (!w) return null;
      return {
        address: w.watch.address(),
        hubs: w.watch.states().map((s) => ({
          hub: s.hub,
          listed: s.listing === 'unknown' ? null : s.listing === 'listed',
          missingSince: iso(s.missingSince),
          lastError: s.lastError,
          checkedAt: iso(s.checkedAt),
        })),
      };
    },
    stop(): void {
      unsubscribe();
      for (const key of [...watched.keys()]) stop(key);
    },
  };
}

export type HubWatches = ReturnType<typeof startHubWatches>;
