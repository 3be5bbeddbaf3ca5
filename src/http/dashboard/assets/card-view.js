// What an instance card shows, as pure functions of the instance's status: used by the page (cards.js) and by the
// daemon, which renders the cards into the first HTML response (../page.ts), so both show the same thing.
import { formatBytes, formatDuration } from './shared.js';

/** Instance colours: none of them green, red, amber or orange, which mean health (the state pill, the connection). */
export const PALETTE_SIZE = 6;

/** The action buttons, in the order the card shows them. */
export const ACTIONS = ['restart', 'update', 'stop', 'rollback', 'hold'];

/**
 * The state pill's colour group: the first part of the state, except that a failing stop is its own group, a server's
 * states are each their own (`server.running` → running) and a server being stopped looks like a restart.
 */
export function stateGroup(state) {
  if (state === 'stopped.failing') return 'failing';
  if (state === 'server.stopping') return 'restarting';
  return state.startsWith('server.') ? state.slice('server.'.length) : state.split('.')[0];
}

const isStopped = (state) => state.startsWith('stopped.');

/** The permission each button needs: the one of the instance route it mirrors (src/http/route-permissions.ts). */
export const ACTION_PERMISSION = {
  restart: 'control.restart',
  update: 'control.update',
  stop: 'control.stop',
  rollback: 'control.rollback',
  hold: 'hold',
};

/** The permission each panel needs; `backupNow` and `restore` are the Backups panel's buttons. */
export const PANEL_PERMISSION = {
  log: 'logs.read',
  console: 'console.send',
  backups: 'backups.read',
  backupNow: 'backups.create',
  restore: 'backups.restore',
  files: 'files.read',
};

/** Why the client may never use `permission` on the instance ('' when it may): `rights` undefined → no accounts. */
export function missingRight(rights, permission, key) {
  return !rights || rights.includes(permission) ? '' : `needs ${permission} on ${key}`;
}

/** Each panel: whether the client may see it (`GET /api/me`'s permissions of this instance). */
export function panelsAllowed(rights) {
  return Object.fromEntries(
    Object.entries(PANEL_PERMISSION).map(([panel, p]) => [panel, !rights || rights.includes(p)]),
  );
}

/**
 * For each action, why it does not apply now ('' when it does); `rights`, when there are accounts, are the client's
 * permissions on the instance, and a button needing one it lacks says which. The daemon says it for the control actions
 * (`status.controls`: the machine's own answer, the one a control request gets), so the page keeps no rules of its
 * own; a status without it (an older daemon) leaves them enabled and the daemon decides. Hold (or Release) applies
 * wherever the daemon reports maintenance.
 */
export function actionBlockers(status, rights) {
  const blockers = { hold: status.maintenance ? '' : 'this watchdog does not report maintenance' };
  for (const action of ACTIONS) {
    if (action === 'hold') continue;
    const choice = status.controls?.[action];
    blockers[action] = !choice || choice.allowed ? '' : choice.reason || 'not possible now';
  }
  // A right the client lacks says so first: it is the reason that does not pass.
  for (const action of ACTIONS)
    blockers[action] = missingRight(rights, ACTION_PERMISSION[action], status.key) || blockers[action];
  return blockers;
}

/** The text of an action's button: a stopped instance is started, not restarted; a held one is released. */
export function actionLabel(action, status) {
  if (action === 'restart') return isStopped(status.state) ? 'Start' : 'Restart';
  if (action === 'hold') return status.maintenance?.hold ? 'Release' : 'Hold';
  return action[0].toUpperCase() + action.slice(1);
}

/** What a pending maintenance action waits for, in words; the CLI's status table says it the same way. */
const WAITING_FOR = {
  hold: 'held',
  Empty: 'waits for 0 players',
  RoundEnd: 'waits for the round end',
  exit: 'under way',
};

/** A pending action and what it waits for: `restart waits for the round end`, `restore of <backup> held`. */
export function pendingText(pending) {
  const action = pending.restore ? `restore of ${pending.restore}` : pending.action;
  return `${action} ${WAITING_FOR[pending.waitingFor] ?? pending.waitingFor}`;
}

/** The card's text fields (`data-field` → text) at server time `now` (ms). */
export function cardFields(status, now) {
  const age = (iso) => formatDuration((now - Date.parse(iso)) / 1000);
  return {
    state: status.state,
    pid: status.pid === null ? '—' : String(status.pid),
    revision: status.revision ?? '—',
    uptime: status.startedAt ? age(status.startedAt) : '—',
    ...resourceTexts(status),
    checkin: status.lastCheckinAt ? `${age(status.lastCheckinAt)} ago` : 'never',
    restarts: String(status.restarts),
    failures: String(status.startupFailures),
    lastExit: lastExitText(status.lastExit, now),
    maintenance: checkText(status.updateCheck) || maintenanceText(status.maintenance, now),
    agones: agonesText(status.agones),
    hub: status.hub ? hubText(status.hub, now) : '',
    backup: backupText(status.backup, status.restore, now),
  };
}

/**
 * The last snapshot (`scheduled 12 MB, 5 min ago`, or `failed 2 min ago: …`) and a failed restore after it; `—`
 * before the first since the daemon started.
 */
function backupText(backup, restore, now) {
  const ago = (iso) => `${formatDuration((now - Date.parse(iso)) / 1000)} ago`;
  const last = !backup
    ? '—'
    : backup.ok
      ? `${backup.kind} ${formatBytes(backup.archiveBytes ?? 0)}, ${ago(backup.at)}`
      : `${backup.kind} failed ${ago(backup.at)}: ${backup.error ?? 'no reason given'}`;
  return restore && !restore.ok ? `${last}; restore failed ${ago(restore.at)}: ${restore.error ?? ''}` : last;
}

/**
 * The daemon's last sample of the running server: CPU in % of one core, the resident memory of its process tree (and
 * how many processes that is, when more than one), the players by its /status; `—` when unknown or none runs.
 */
function resourceTexts(status) {
  const r = status.resources;
  // As `watchdog status` writes it (src/cli/client/status-table.ts): the same sample reads the same in both.
  const cpu = r
    ? `${r.cpuPercent < 10 ? r.cpuPercent.toFixed(1).replace(/\.0$/, '') : Math.round(r.cpuPercent)}%`
    : '—';
  const memory = r ? `${formatBytes(r.rssBytes)}${r.processes > 1 ? ` (${r.processes} processes)` : ''}` : '—';
  return { cpu, memory, players: typeof status.players === 'number' ? String(status.players) : '—' };
}

/** A failing update check, which matters more than the schedule: `update check failing: <error>`; '' otherwise. */
function checkText(check) {
  return check?.result === 'failed' ? `update check failing: ${check.error ?? 'no reason given'}` : '';
}

/** Agones mode: the GameServer's name and state (`watchdog-game-x7k2p: Allocated`); '' when not in Agones mode. */
/**
 * The hub listing of a server that advertises, one hub after another: `listed by <hub URL>`,
 * `missing from … for 12 min: <why>`, `… not asked yet`; the CLI's status says it the same way.
 */
export function hubText(hub, now) {
  return hub.hubs
    .map((h) => {
      if (h.listed === true) return `listed by ${h.hub}`;
      if (h.listed === false) {
        const minutes = Math.floor((now - Date.parse(h.missingSince ?? new Date(now).toISOString())) / 60_000);
        return `missing from ${h.hub} for ${minutes} min${h.lastError ? `: ${h.lastError}` : ''}`;
      }
      return `${h.hub} ${h.lastError ? `not reached: ${h.lastError}` : 'not asked yet'}`;
    })
    .join('; ');
}

function agonesText(a) {
  if (!a) return '';
  return `${a.gameServer ?? 'GameServer not reported yet'}: ${a.state ?? (a.ready ? 'Ready sent' : 'not Ready yet')}`;
}

/**
 * One line: a hold, else what is pending and what it waits for, else the next scheduled restart or update check;
 * `—` when there is none (or from an older daemon).
 */
function maintenanceText(m, now) {
  if (!m) return '—';
  const until = (iso) => formatDuration((Date.parse(iso) - now) / 1000);
  // A waiting update already downloaded (or built) needs only the swap when its moment comes.
  const staged = m.staged ? ` (update ${m.staged} staged)` : '';
  if (m.hold) return `held for ${until(m.hold.until)}${m.hold.reason ? `: ${m.hold.reason}` : ''}${staged}`;
  const p = m.pending;
  if (p) return `${pendingText(p)}, forced in ${until(p.deadline)}${staged}`;
  const next = [
    m.nextRestart ? `restart in ${until(m.nextRestart)}` : '',
    m.nextUpdateCheck ? `update check in ${until(m.nextUpdateCheck)}` : '',
  ].filter(Boolean);
  return next.length > 0 ? `next ${next.join(', ')}` : '—';
}

/**
 * `hang (SIGKILL), 5s ago`; `launch failed, 5s ago: cannot launch … check RunCommand`; a crash with the server's
 * last line after a colon; `—` before any exit or from an older daemon.
 */
function lastExitText(exit, now) {
  if (!exit) return '—';
  const ago = `${formatDuration((now - Date.parse(exit.at)) / 1000)} ago`;
  const why = exit.detail ? `: ${exit.detail}` : '';
  if (exit.reason === 'launch-failed') return `launch failed, ${ago}${why}`;
  const status = exit.signal !== null ? exit.signal : exit.code !== null ? `code ${exit.code}` : 'status unknown';
  return `${exit.reason} (${status}), ${ago}${why}`;
}

/** The name shown beside the key, when it says more than the key. */
export function shownName(status) {
  return status.name && status.name !== status.key ? status.name : '';
}
