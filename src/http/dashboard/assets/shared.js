// Shared by the dashboard's modules: the instances shown, the server's clock, and text formatting.

/** @typedef {{ key: string, color: string, status: any, card: HTMLElement, log: string[], logLoaded: boolean, pendingLog: string[], updateHideTimer?: number }} Instance */

/** @type {Map<string, Instance>} */
export const instances = new Map();

/** Each state's plain name in the operator's view of the chart (the page's inlined state brings them). */
export const stateNames = new Map();

/**
 * Who is logged in and their permissions on each instance they may see (`GET /api/me`); null until known, and
 * `accounts: false` while the daemon has no accounts (then every button is the daemon's to refuse, as before).
 */
export const me = { info: null };

/** The client's permissions on `key`, or undefined when there are no accounts (nothing to hide). */
export function rightsOf(key) {
  const info = me.info;
  if (!info?.accounts) return undefined;
  return info.permissions[key] ?? [];
}

/** Server clock minus browser clock, set from `hello`, so ages are right even on a skewed browser. */
export const clock = { skewMs: 0 };
export const serverNow = () => Date.now() + clock.skewMs;
export const clockTime = (at) => new Date(at - clock.skewMs).toLocaleTimeString([], { hour12: false });

export const $ = (sel, root = document) => root.querySelector(sel);

export function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

const UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** Decimal units, written as the daemon writes them (src/store/disk-space.ts): `120 MB`, `9.8 GB`, `512 bytes`. */
export function formatBytes(bytes) {
  let n = Math.max(0, bytes);
  let unit = 0;
  while (n >= 1000 && unit < UNITS.length - 1) {
    n /= 1000;
    unit++;
  }
  if (unit === 0) return `${Math.round(n)} bytes`;
  return `${n.toFixed(n < 10 ? 1 : 0).replace(/\.0$/, '')} ${UNITS[unit]}`;
}
