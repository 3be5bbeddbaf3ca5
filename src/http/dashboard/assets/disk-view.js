// The disk banner's text, shared by the page the daemon renders (page.ts) and the page itself (app.js): one line
// per watched file system that is low on space, from the `disk` readings every instance's status carries.

/** @param {Array<{ disk?: Array<{ holds: string, low: boolean, message: string }> }>} statuses */
export function lowDiskLines(statuses) {
  const lines = new Map();
  for (const s of statuses) for (const d of s.disk ?? []) if (d.low) lines.set(d.holds, `Disk space low: ${d.message}`);
  return [...lines.values()];
}

/** Shows or hides the banner `el` with `lines`, as text only. */
export function showDiskBanner(el, lines) {
  if (!el) return;
  el.hidden = lines.length === 0;
  el.replaceChildren(
    ...lines.map((line) => {
      const p = document.createElement('p');
      p.className = 'disk-line';
      p.textContent = line;
      return p;
    }),
  );
}
