// Restart, update and stop: confirmed in a modal dialog, then sent to the daemon's admin control route.
import { $, instances } from './shared.js';

const ACTIONS = {
  restart: { title: 'Restart', text: 'The server is asked to shut down, then launched again (a pending update is installed first).' },
  update: { title: 'Update', text: 'The watchdog checks for a newer build; when there is one, it is installed and the server restarted on it.' },
  stop: { title: 'Stop', text: 'The server is shut down and stays down until it is restarted from here or with `watchdog restart`.' },
};

/** Resolves true when the operator confirms in the modal dialog. */
function confirmAction(key, action) {
  const dialog = /** @type {HTMLDialogElement} */ ($('#confirm'));
  const info = ACTIONS[action];
  $('#confirm-title').textContent = `${info.title} ${key}?`;
  $('#confirm-text').textContent = info.text;
  $('#confirm-ok').textContent = info.title;
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

export async function runAction(key, action, button) {
  if (!(await confirmAction(key, action))) return;
  const result = $('.action-result', instances.get(key)?.card ?? document.body);
  button.disabled = true;
  try {
    // The header marks the request as the dashboard's own (the daemon refuses control requests without it).
    const res = await fetch(`/api/instances/${encodeURIComponent(key)}/${action}`, {
      method: 'POST',
      headers: { 'X-Watchdog-Dashboard': '1' },
    });
    const body = await res.json().catch(() => ({}));
    result.textContent = res.ok ? `${action} accepted` : `${action} refused (${res.status}): ${body.error ?? res.statusText}`;
    result.dataset.ok = String(res.ok);
  } catch (err) {
    result.textContent = `${action} failed: ${err instanceof Error ? err.message : String(err)} — is the watchdog running?`;
    result.dataset.ok = 'false';
  } finally {
    button.disabled = false;
  }
}
