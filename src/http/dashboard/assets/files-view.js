// The files panel's rows, apart from the DOM so the daemon's tests can check them: one row per entry of a listing
// from `/api/instances/<key>/files/<path>`, folders opening in the panel, files linking to their download.

/** The dashboard route of `path` (`/`-separated, '' for the list of shared folders), each segment encoded. */
export function filesUrl(key, path) {
  const rest = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => `/${encodeURIComponent(s)}`)
    .join('');
  return `/api/instances/${encodeURIComponent(key)}/files${rest}`;
}

/** The folder above `path`, or null at the top (the list of shared folders). */
export function parentPath(path) {
  if (path === '') return null;
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/**
 * @param {string} key
 * @param {{ path: string, entries: Array<{ name: string, type: 'file' | 'folder', size: number, modified: string }> }} listing
 */
export function fileRows(key, listing) {
  return listing.entries.map((e) => {
    const path = listing.path === '' ? e.name : `${listing.path}/${e.name}`;
    return e.type === 'folder'
      ? { name: `${e.name}/`, folder: path, href: null, size: null, modified: e.modified }
      : { name: e.name, folder: null, href: filesUrl(key, path), size: e.size, modified: e.modified };
  });
}
