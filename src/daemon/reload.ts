import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { hasAccounts, readUsersFile, type UsersDb } from '../auth/users-file.ts';
import { defaultRunCommand, type LoadResult } from '../config/load.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { TimingSettings } from '../config/schema.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ReconfigureResult } from '../supervisor/supervisor.ts';

/** Settings read once at start: a reload logs that they changed and keeps the running values. */
const RESTART_ONLY: ReadonlyArray<{ name: string; of: (c: ResolvedConfig) => unknown }> = [
  { name: 'Urls', of: (c) => c.settings.Urls },
  { name: 'BaseUrl', of: (c) => c.settings.BaseUrl },
  { name: 'Process', of: (c) => c.settings.Process },
  { name: 'Servers.InstanceRoot', of: (c) => c.settings.Servers.InstanceRoot },
  // The Agones wrapper is made once, for the instance it wraps (src/daemon/run.ts).
  { name: 'Agones', of: (c) => c.agones },
  // Caps and timeouts are set on the listening sockets when they are made.
  { name: 'Connections', of: (c) => c.settings.Connections },
];

export function restartOnlyChanges(running: ResolvedConfig, next: ResolvedConfig): string[] {
  return RESTART_ONLY.filter((s) => JSON.stringify(s.of(running)) !== JSON.stringify(s.of(next))).map((s) => s.name);
}

/** `next` with `running`'s restart-only settings: instance folders stay under the running root, with their builds. */
export function pinRestartOnly(running: ResolvedConfig, next: ResolvedConfig): ResolvedConfig {
  const root = resolve(running.workDir, running.settings.Servers.InstanceRoot);
  const instances: ResolvedInstance[] = next.instances.map((i) => {
    const dir = resolve(root, i.key);
    return dir === i.dir ? i : { ...i, dir, program: resolve(dir, i.settings.RunCommand ?? defaultRunCommand()) };
  });
  return {
    ...next,
    listen: running.listen,
    baseUrl: running.baseUrl,
    persistServers: running.persistServers,
    agones: running.agones,
    instances,
    settings: {
      ...next.settings,
      Urls: running.settings.Urls,
      BaseUrl: running.settings.BaseUrl,
      Process: running.settings.Process,
      Agones: running.settings.Agones,
      Servers: { ...next.settings.Servers, InstanceRoot: running.settings.Servers.InstanceRoot },
    },
  };
}

/** Settings and the secrets read from files. */
function sameConfig(a: ResolvedConfig, b: ResolvedConfig): boolean {
  const tokens = (c: ResolvedConfig) => [...c.instances.map((i) => [i.key, i.apiToken ?? null]), c.oidcClientSecret];
  return JSON.stringify([a.settings, tokens(a)]) === JSON.stringify([b.settings, tokens(b)]);
}

/** Whether a file name is one of the layers of `mainFile` (`appsettings.yml`, `appsettings.<env>.yml`, …). */
export function isConfigLayer(mainFile: string, name: string): boolean {
  const ext = extname(mainFile);
  const stem = basename(mainFile, ext);
  if (name === basename(mainFile)) return true;
  const middle =
    name.startsWith(`${stem}.`) && name.endsWith(ext) ? name.slice(stem.length + 1, name.length - ext.length) : '';
  return /^[A-Za-z0-9_-]+$/.test(middle);
}

/**
 * Calls `reload` on SIGHUP, and 300 ms after a burst of changes to `folder`'s files that `matches` accepts (the
 * folder, not the files: editors save by renaming over them). Returns the function that stops both.
 */
export function reloadOnChange(opts: {
  folder: string;
  matches: (name: string) => boolean;
  what: string;
  reload: (trigger: 'SIGHUP' | 'file change') => void;
  log: Logger;
}): () => void {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | null = null;
  const onHup = () => opts.reload('SIGHUP');
  process.on('SIGHUP', onHup);
  try {
    watcher = watch(opts.folder, { persistent: false }, (_event, name) => {
      // Some platforms do not report the name: then any change in the folder may be ours.
      if (name !== null && !opts.matches(name.toString())) return;
      clearTimeout(timer);
      timer = setTimeout(() => opts.reload('file change'), 300);
    });
    watcher.on('error', (err) =>
      opts.log.warn(`stopped watching the ${opts.what} folder; reload with SIGHUP`, { error: describeError(err) }),
    );
  } catch (err) {
    opts.log.warn(`cannot watch the ${opts.what} folder; reload with SIGHUP`, {
      folder: opts.folder,
      error: describeError(err),
    });
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
    process.off('SIGHUP', onHup);
  };
}

/** What the daemon lacks, not what the files say: the same reload can succeed once it has them back. */
const STARVED = /\((EMFILE|ENFILE|EAGAIN|ENOMEM)\)/;

export function starvedOnly(problems: readonly string[]): boolean {
  return problems.length > 0 && problems.every((p) => STARVED.test(p));
}

/** A reload a person asked for is retried on the launch back-off: descriptors come back once a flood passes. */
export function reloadRetryMs(timing: TimingSettings, attempt: number): number {
  return Math.min(timing.BackoffInitialSeconds * 2 ** attempt, timing.BackoffMaxSeconds) * 1000;
}

type ReloadOutcome =
  | { kind: 'invalid'; problems: string[] }
  | { kind: 'unchanged' }
  | { kind: 'applied'; result: ReconfigureResult; notApplied: string[] };

/**
 * Config reload (docs/production.md) on SIGHUP and on changes to the files: an invalid file keeps the running
 * configuration and logs every problem; every change of a valid one is applied, whatever the order (the real watchdog
 * stops at the first removed instance).
 */
export function startConfigReload(opts: {
  /** Its folder is watched. */
  mainFile: string;
  /** `loadConfig` with the start options. */
  load: () => Promise<LoadResult>;
  apply: (config: ResolvedConfig) => Promise<ReconfigureResult>;
  initial: ResolvedConfig;
  log: Logger;
  onApplied?: (config: ResolvedConfig) => void;
}) {
  const { log } = opts;
  let running = opts.initial;
  let chain: Promise<ReloadOutcome> = Promise.resolve({ kind: 'unchanged' });
  let queued: Promise<ReloadOutcome> | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let retries = 0;

  const once = async (trigger: string): Promise<ReloadOutcome> => {
    const loaded = await opts.load();
    if (!loaded.ok) {
      log.error(`configuration reload (${trigger}) refused; the running configuration stays in effect`, {
        problems: loaded.problems.length,
      });
      for (const p of loaded.problems) log.error(`  ${p}`);
      return { kind: 'invalid', problems: loaded.problems };
    }
    for (const w of loaded.warnings) log.warn(w);
    if (sameConfig(running, loaded.config)) {
      log.debug(`configuration reload (${trigger}): nothing changed`);
      return { kind: 'unchanged' };
    }
    const notApplied = restartOnlyChanges(running, loaded.config);
    for (const name of notApplied) log.warn(`${name} changed: it needs a restart of the daemon and was not applied`);
    const next = pinRestartOnly(running, loaded.config);
    running = next;
    const result = await opts.apply(next);
    log.info(`configuration reloaded (${trigger})`, {
      added: result.added.join(',') || '-',
      removed: result.removed.join(',') || '-',
      updated: result.updated.join(',') || '-',
      ...(result.failed.length > 0 ? { failed: result.failed.join(',') } : {}),
    });
    return { kind: 'applied', result, notApplied };
  };

  // At most one reload runs and one waits: every trigger during a reload is served by the waiting one.
  const reload = (trigger: string): Promise<ReloadOutcome> => {
    queued ??= chain.then(() => {
      queued = null;
      return once(trigger).catch((err: unknown): ReloadOutcome => {
        log.error('configuration reload failed', { error: describeError(err) });
        return { kind: 'invalid', problems: [describeError(err)] };
      });
    });
    chain = queued;
    return queued;
  };

  const run = (trigger: string) => {
    if (stopped) return;
    clearTimeout(retry);
    void reload(trigger).then((outcome) => {
      if (outcome.kind === 'applied') opts.onApplied?.(running);
      if (stopped || outcome.kind !== 'invalid' || !starvedOnly(outcome.problems)) {
        retries = 0;
        return;
      }
      const ms = reloadRetryMs(running.timing, retries++);
      log.warn(
        `the configuration could not be read for want of descriptors or memory; reloading again in ${ms / 1000} s`,
      );
      retry = setTimeout(() => run(trigger), ms);
    });
  };
  const unwatch = reloadOnChange({
    folder: dirname(opts.mainFile),
    matches: (name) => isConfigLayer(opts.mainFile, name),
    what: 'configuration',
    reload: run,
    log,
  });
  return {
    current: (): ResolvedConfig => running,
    stop() {
      stopped = true;
      clearTimeout(retry);
      unwatch();
    },
  };
}

/** The users file, read again on SIGHUP and change; a broken or removed one leaves the last good one in force. */
export function startUsersReload(opts: { file: string; initial: UsersDb; log: Logger }) {
  const { file, log } = opts;
  let db = opts.initial;
  let chain = Promise.resolve();
  const once = async (trigger: string) => {
    const read = await readUsersFile(file);
    if (!read.ok) {
      log.error(`users file reload (${trigger}) refused; the last good one stays in force`, { file });
      for (const p of read.problems) log.error(`  ${p}`);
      return;
    }
    if (read.missing && hasAccounts(db)) {
      log.error(`the users file ${file} is gone; its last good version stays in force (empty it to remove every user)`);
      return;
    }
    for (const w of read.warnings) log.warn(w);
    db = read.db;
    log.info(`users file reloaded (${trigger})`, { users: db.users.size, keys: db.keys.size });
  };
  const reload = (trigger: string): Promise<void> => {
    chain = chain.then(() => once(trigger)).catch(() => undefined);
    return chain;
  };
  const stop = reloadOnChange({
    folder: dirname(file),
    matches: (name) => name === basename(file),
    what: 'users file',
    reload: (trigger) => void reload(trigger),
    log,
  });
  return {
    current: (): UsersDb => db,
    reload,
    stop,
  };
}
