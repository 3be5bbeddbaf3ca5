// A card's Backups panel: the instance's snapshots (loaded when the panel opens), Back up now, and Restore; the
// snapshot taken before the installed build also offers the rollback that puts its data back.
import { runAction } from './actions.js';
import { missingRight } from './card-view.js';
import { $, formatBytes, rightsOf } from './shared.js';

const DASHBOARD = { 'X-Watchdog-Dashboard': '1' };
const url = (key) => `/api/instances/${encodeURIComponent(key)}/backups`;

/** Says `text` in the panel's status line, marked as a failure unless `ok`. */
function say(card, text, ok) {
  const result = $('.backup-result', card);
  result.textContent = text;
  result.dataset.ok = String(ok);
}

async function load(card, key) {
  const list = $('.backup-list', card);
  try {
    const res = await fetch(url(key), { headers: DASHBOARD });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) return say(card, `cannot list the backups (${res.status}): ${body.error ?? res.statusText}`, false);
    list.replaceChildren(...body.map((b) => row(card, key, b)));
    if (body.length === 0) say(card, 'no backups yet', true);
  } catch (err) {
    say(card, `cannot list the backups: ${err instanceof Error ? err.message : String(err)}`, false);
  }
}

/** One snapshot: when, why, the build, its size, and what can be done with it. Text only: nothing is parsed as HTML. */
function row(card, key, b) {
  const li = document.createElement('li');
  li.dataset.id = b.id;
  const build = b.revisionAfter ? `${b.revision ?? '—'} → ${b.revisionAfter}` : (b.revision ?? '—');
  const text = document.createElement('span');
  text.textContent = `${new Date(b.takenAt).toLocaleString()} · ${b.kind} · ${build} · ${formatBytes(b.archiveBytes)}`;
  text.title = b.id;
  li.append(text);
  const button = (label, action, query, what, permission) => {
    const el = document.createElement('button');
    el.type = 'button';
    el.textContent = label;
    // A button the client may not use stays in sight, disabled, saying which right it needs.
    el.title = missingRight(rightsOf(key), permission, key);
    el.disabled = el.title !== '';
    el.dataset.backupAction = action;
    el.addEventListener('click', async () => {
      if (await runAction(key, action, label, { query, text: what })) void load(card, key);
    });
    li.append(el);
  };
  button(
    'Restore',
    'restore',
    // Now: an operator at the dashboard watches it happen (`watchdog restore` waits for the round end by default).
    { backup: b.id, when: 'Now' },
    `${key} is shut down gracefully now, its current data is kept as a new backup, and the data of ${b.id} is put back before it starts again.`,
    'backups.restore',
  );
  if (b.forRollback)
    button(
      'Rollback with this data',
      'rollback',
      { withData: 'true' },
      `The previous build of ${key} and the data it had (${b.id}, taken before the installed build was installed) are put back; the current data is kept as a new backup. A running server is shut down gracefully first.`,
      'control.rollback',
    );
  return li;
}

/** Lists the snapshots again when the panel is open and the status says one was taken or restored since `before`. */
export function refreshBackups(card, key, before, now) {
  const changed = before?.backup?.at !== now.backup?.at || before?.restore?.at !== now.restore?.at;
  if (changed && /** @type {HTMLDetailsElement} */ ($('details.backups', card)).open) void load(card, key);
}

export function wireBackups(card, key) {
  const panel = /** @type {HTMLDetailsElement} */ ($('details.backups', card));
  panel.addEventListener('toggle', () => {
    if (panel.open) void load(card, key);
  });
  const now = /** @type {HTMLButtonElement} */ ($('.backup-now', card));
  now.addEventListener('click', async () => {
    now.disabled = true;
    say(card, 'taking a snapshot…', true);
    try {
      const res = await fetch(url(key), { method: 'POST', headers: DASHBOARD });
      const body = await res.json().catch(() => ({}));
      say(card, res.ok ? `taken: ${body.id}` : `refused (${res.status}): ${body.error ?? res.statusText}`, res.ok);
      if (res.ok) await load(card, key);
    } catch (err) {
      say(card, `failed: ${err instanceof Error ? err.message : String(err)} — is the watchdog running?`, false);
    } finally {
      now.disabled = false;
    }
  });
}
