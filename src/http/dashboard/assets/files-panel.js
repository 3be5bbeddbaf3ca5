// The files panel of an instance card: the folders the instance shares (Files.Folders), opened one at a time, each
// file a download link. Loaded when the panel is first opened, again on each folder change; text only.
import { fileRows, filesUrl, parentPath } from './files-view.js';
import { $, formatBytes } from './shared.js';

/** Wires the `details.files` panel of `card` to the instance `key`. */
export function attachFilesPanel(card, key) {
  const panel = $('details.files', card);
  if (!panel) return;
  let path = '';
  const show = async (next) => {
    const status = $('.files-status', panel);
    status.textContent = 'loading…';
    try {
      const res = await fetch(filesUrl(key, next));
      const body = await res.json().catch(() => ({}));
      if (!res.ok) {
        status.textContent = `refused (${res.status}): ${body.error ?? res.statusText}`;
        return;
      }
      path = next;
      render(panel, key, body);
      status.textContent =
        body.entries.length === 0 ? 'empty' : body.truncated > 0 ? `${body.truncated} more not shown` : '';
    } catch (err) {
      status.textContent = `failed: ${err instanceof Error ? err.message : String(err)} — is the watchdog running?`;
    }
  };
  panel.addEventListener('toggle', () => {
    if (panel.open) void show(path);
  });

  function render(root, instanceKey, listing) {
    $('.files-path', root).textContent = listing.path === '' ? 'shared folders' : listing.path;
    const up = /** @type {HTMLButtonElement} */ ($('.files-up', root));
    const above = parentPath(listing.path);
    up.hidden = above === null;
    up.onclick = () => void show(above ?? '');
    const rows = fileRows(instanceKey, listing).map((r) => {
      const tr = document.createElement('tr');
      const name = document.createElement('td');
      if (r.folder !== null) {
        const open = document.createElement('button');
        open.type = 'button';
        open.className = 'link';
        open.textContent = r.name;
        open.addEventListener('click', () => void show(r.folder ?? ''));
        name.append(open);
      } else {
        const a = document.createElement('a');
        a.href = r.href ?? '#';
        a.download = r.name;
        a.textContent = r.name;
        name.append(a);
      }
      const size = document.createElement('td');
      size.textContent = r.size === null ? '' : formatBytes(r.size);
      const time = document.createElement('td');
      time.textContent = new Date(r.modified).toLocaleString([], { hour12: false });
      tr.append(name, size, time);
      return tr;
    });
    $('.files-rows', root).replaceChildren(...rows);
  }
}
