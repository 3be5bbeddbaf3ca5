// The watchdog dashboard: plain browser JavaScript modules, served by the daemon itself (no CDN, no build step).
// Everything shown comes from this origin: the statechart SVG, /api/instances, the server logs and /events (SSE).
// Text from the daemon is only ever set with textContent, never as markup (server log lines are arbitrary text).
import { appendLog, applyStatus, removeInstance, renderAges, showUpdate } from './cards.js';
import { loadChart } from './chart.js';
import { lowDiskLines, showDiskBanner } from './disk-view.js';
import { addEvent, listEvents } from './event-list.js';
import { $, clock, instances, me, stateNames } from './shared.js';

/** Who is logged in (the header) and what they may do; the cards are drawn again by it. */
function adoptMe(info) {
  me.info = info;
  const who = $('#who');
  who.textContent = info?.session ? info.user : '';
  who.hidden = !info?.session;
  $('#logout').hidden = !info?.session;
  for (const inst of instances.values()) if (inst.status) applyStatus(inst.status);
}

async function loadMe() {
  try {
    const res = await fetch('/api/me');
    if (res.ok) adoptMe(await res.json());
    // The session ended (logged out elsewhere, expired): back to the login form.
    else if (res.status === 401 && me.info?.session) location.assign('/login');
  } catch {
    // The event stream shows the connection state; the next refresh asks again.
  }
}

async function logout() {
  try {
    await fetch('/logout', { method: 'POST' });
  } finally {
    location.assign('/login');
  }
}

function setConnection(state, text) {
  const el = $('#conn');
  el.dataset.state = state;
  el.textContent = text;
}

/** The banner over the page while a watched disk is low: every status carries the same readings. */
function showDisk(statuses) {
  showDiskBanner($('#disk-banner'), lowDiskLines(statuses));
}

function onEvent(type, e) {
  if (e.instance) {
    applyStatus(e.instance);
    showDisk([e.instance]);
  }
  const inst = instances.get(e.key);
  if (type === 'instance:checkin') {
    if (inst?.status) inst.status.lastCheckinAt = new Date(e.at).toISOString();
    return;
  }
  if (type === 'instance:log') {
    if (inst) appendLog(inst, e.skipped > 0 ? [`(${e.skipped} lines skipped)`, e.line] : [e.line]);
    return;
  }
  if (type === 'instance:update' && inst) {
    showUpdate(inst, e);
    if (e.phase === 'download' || e.phase === 'verify' || e.phase === 'extract' || e.phase === 'install') return;
  }
  addEvent(type, e);
}

function reconcile(statuses) {
  const keys = new Set(statuses.map((s) => s.key));
  for (const key of [...instances.keys()]) if (!keys.has(key)) removeInstance(key);
  for (const s of statuses) applyStatus(s);
  showDisk(statuses);
}

function connect() {
  const source = new EventSource('/events?logs=1');
  source.addEventListener('open', () => setConnection('live', 'live'));
  const listening = new Set();
  source.addEventListener('hello', (m) => {
    const hello = JSON.parse(m.data);
    // Listeners added here hear every event after this one; a reconnect's hello adds none twice.
    for (const type of hello.events ?? []) {
      if (listening.has(type)) continue;
      listening.add(type);
      source.addEventListener(type, (e) => onEvent(type, JSON.parse(e.data)));
    }
    clock.skewMs = hello.now - Date.now();
    $('#version').textContent = `v${hello.version}`;
    void loadMe();
    reconcile(hello.instances);
    listEvents(hello.recent);
    setConnection('live', 'live');
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (401/403) or not an event stream: EventSource gives up, so try again ourselves.
      setConnection('down', 'disconnected — retrying');
      setTimeout(connect, 5000);
    } else {
      setConnection('down', 'reconnecting…');
    }
  });
}

async function refresh() {
  try {
    await loadMe();
    const res = await fetch('/api/instances');
    if (res.ok) reconcile(await res.json());
  } catch {
    // The event stream shows the connection state; the next refresh tries again.
  }
}

/** The state the daemon rendered the page from (page.ts): taken over at once, before /events answers. */
function adoptInitialState() {
  const el = $('#initial-state');
  if (!el) return;
  try {
    const initial = JSON.parse(el.textContent ?? '');
    clock.skewMs = initial.now - Date.now();
    for (const [state, name] of Object.entries(initial.stateNames ?? {})) stateNames.set(state, name);
    if (initial.me) me.info = initial.me;
    $('#version').textContent = `v${initial.version}`;
    reconcile(initial.instances);
    // The same events as sent, in the browser's time zone (the daemon wrote UTC).
    listEvents(initial.recent);
  } catch {
    // The cards and events as sent stay; `hello` brings the state.
  }
}

document.addEventListener('DOMContentLoaded', () => {
  adoptInitialState();
  $('#logout').addEventListener('click', () => void logout());
  void loadChart();
  connect();
  setInterval(() => {
    for (const inst of instances.values()) renderAges(inst);
  }, 1000);
  setInterval(() => void refresh(), 10_000);
});
