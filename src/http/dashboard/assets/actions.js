// Restart (Start), update, rollback and stop: confirmed in a modal dialog, then sent to the daemon's admin control route.
import { $, instances } from './shared.js';

/** What each button does, said in its confirmation dialog; `Start` is the restart of a stopped instance. */
const TEXTS = {
  Restart: (key) =>
    `${key} is asked to shut down gracefully, then launched again (a pending update is installed first).`,
  Start: (key) => `${key} is launched again (a pending update is installed first).`,
  Update: (key) =>
    `The watchdog checks for a newer build of ${key}. When there is one, the server is asked to leave at the end of the current round, and the build is installed before it is launched again.`,
  Rollback: (key) =>
    `The previous build of ${key} (bin.prev) is put back in place of the current one and the server is launched on it; a running server is shut down gracefully first.`,
  Hold: (key) =>
    `Scheduled restarts and automatic update installs of ${key} wait for an hour (a found update is remembered); crashes and hangs are still handled. Release ends the hold early.`,
  Release: (key) => `The hold on ${key} ends now; a restart or update it held back goes ahead by its policy.`,
  Stop: (key) =>
    `${key} is asked to leave at the end of the current round and then shuts down gracefully; if it cannot be asked, it is shut down gracefully at once. It stays stopped until you start it here or with \`watchdog restart ${key}\`.`,
};

/** Resolves true when the operator confirms in the modal dialog; `text` says what happens (default: TEXTS). */
function confirmAction(key, label, text) {
  const dialog = /** @type {HTMLDialogElement} */ ($('#confirm'));
  $('#confirm-title').textContent = `${label} ${key}?`;
  $('#confirm-text').textContent = text ?? TEXTS[label]?.(key) ?? '';
  $('#confirm-ok').textContent = label;
  return new Promise((resolve) => {
    const done = (ok) => {
      $('#confirm-ok').removeEventListener('click', onOk);
      $('#confirm-cancel').removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      dialog.close();
      resolve(ok);
    };
    const onOk = () => done(true);
    const onCancel = () => done(false);
    $('#confirm-ok').addEventListener('click', onOk);
    $('#confirm-cancel').addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
  });
}

/**
 * Sends one line to the server console (shown only where the instance has `Console` on); its output arrives in the
 * server log below. Resolves true when the daemon took it.
 */
export async function sendConsole(key, command, result) {
  try {
    const res = await fetch(`/api/instances/${encodeURIComponent(key)}/console`, {
      method: 'POST',
      headers: { 'X-Watchdog-Dashboard': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ command }),
    });
    const body = await res.json().catch(() => ({}));
    result.textContent = res.ok ? 'sent' : `refused (${res.status}): ${body.error ?? res.statusText}`;
    result.dataset.ok = String(res.ok);
    return res.ok;
  } catch (err) {
    result.textContent = `failed: ${err instanceof Error ? err.message : String(err)} — is the watchdog running?`;
    result.dataset.ok = 'false';
    return false;
  }
}

/**
 * Confirms, then sends `action` (with `opts.query`: a restore's backup, a rollback's withData); the card shows the
 * answer. The caller disables the buttons meanwhile. Resolves true when the daemon took it.
 */
export async function runAction(key, action, label, opts = {}) {
  if (!(await confirmAction(key, label, opts.text))) return false;
  const result = $('.action-result', instances.get(key)?.card ?? document.body);
  const query = opts.query ? `?${new URLSearchParams(opts.query)}` : '';
  try {
    // The header marks the request as the dashboard's own (the daemon refuses control requests without it).
    const res = await fetch(`/api/instances/${encodeURIComponent(key)}/${action}${query}`, {
      method: 'POST',
      headers: { 'X-Watchdog-Dashboard': '1' },
    });
    const body = await res.json().catch(() => ({}));
    result.textContent = res.ok
      ? `${action} accepted`
      : `${action} refused (${res.status}): ${body.error ?? res.statusText}`;
    result.dataset.ok = String(res.ok);
    return res.ok;
  } catch (err) {
    result.textContent = `${action} failed: ${err instanceof Error ? err.message : String(err)} — is the watchdog running?`;
    result.dataset.ok = 'false';
    return false;
  }
}
