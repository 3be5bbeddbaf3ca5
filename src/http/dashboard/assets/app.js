// The watchdog dashboard: plain browser JavaScript, served by the daemon itself (no CDN, no build step).
// Everything shown comes from this origin: the statechart SVG, /api/instances, the server logs and /events (SSE).
// Text from the daemon is only ever set with textContent, never as markup (server log lines are arbitrary text).
'use strict';

const PALETTE = ['#1e88e5', '#d81b60', '#43a047', '#8e24aa', '#f4511e', '#00897b', '#6d4c41', '#3949ab'];
const NODE_PREFIX = 'state:';
const MAX_EVENTS = 200;
const MAX_LOG_LINES = 300;
const ACTIONS = {
  restart: { title: 'Restart', text: 'The server is asked to shut down, then launched again (a pending update is installed first).' },
  update: { title: 'Update', text: 'The watchdog checks for a newer build; when there is one, it is installed and the server restarted on it.' },
  stop: { title: 'Stop', text: 'The server is shut down and stays down until it is restarted from here or with `watchdog restart`.' },
};
const EVENT_TYPES = ['instance:state', 'instance:alert', 'instance:update', 'instance:restart', 'instance:launch', 'instance:exit', 'instance:checkin', 'instance:log', 'control'];

/** @type {Map<string, {key: string, color: string, status: any, card: HTMLElement, log: string[], logLoaded: boolean, pendingLog: string[], updateHideTimer?: number}>} */
const instances = new Map();
let skewMs = 0; // server clock minus browser clock, from `hello`
let chartReady = false;
let colorIndex = 0;

const $ = (sel, root = document) => root.querySelector(sel);
const serverNow = () => Date.now() + skewMs;

function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(1)} ${units[i]}`;
}

const clockTime = (at) => new Date(at - skewMs).toLocaleTimeString([], { hour12: false });

// --- instance cards ---------------------------------------------------------------------------------------------

function ensureInstance(key) {
  let inst = instances.get(key);
  if (inst) return inst;
  const card = /** @type {HTMLElement} */ (/** @type {HTMLTemplateElement} */ ($('#instance-card')).content.firstElementChild.cloneNode(true));
  const color = PALETTE[colorIndex++ % PALETTE.length];
  card.dataset.key = key;
  card.style.setProperty('--instance-color', color);
  $('.key', card).textContent = key;
  for (const button of card.querySelectorAll('button[data-action]')) {
    button.addEventListener('click', () => void runAction(key, button.dataset.action, button));
  }
  inst = { key, color, status: null, card, log: [], logLoaded: false, pendingLog: [] };
  instances.set(key, inst);
  const list = $('#instances');
  const after = [...list.children].find((el) => el.dataset.key > key);
  list.insertBefore(card, after ?? null);
  void loadLog(inst);
  return inst;
}

function removeInstance(key) {
  const inst = instances.get(key);
  if (!inst) return;
  inst.card.remove();
  instances.delete(key);
  highlightChart();
}

function applyStatus(status) {
  if (!status) return;
  const inst = ensureInstance(status.key);
  const changed = inst.status?.state !== status.state;
  inst.status = status;
  renderCard(inst);
  if (changed) highlightChart();
}

function setField(card, name, text) {
  const el = card.querySelector(`[data-field="${name}"]`);
  if (el && el.textContent !== text) el.textContent = text;
}

function renderCard(inst) {
  const s = inst.status;
  const card = inst.card;
  $('.name', card).textContent = s.name && s.name !== s.key ? s.name : '';
  const pill = $('.state-pill', card);
  pill.dataset.group = s.state.split('.')[0];
  if (s.state === 'stopped.failing') pill.dataset.group = 'failing';
  setField(card, 'state', s.state);
  setField(card, 'pid', s.pid === null ? '—' : String(s.pid));
  setField(card, 'revision', s.revision ?? '—');
  setField(card, 'restarts', String(s.restarts));
  setField(card, 'failures', String(s.startupFailures));
  card.dataset.state = s.state;
  renderAges(inst);
}

function renderAges(inst) {
  const s = inst.status;
  if (!s) return;
  const now = serverNow();
  setField(inst.card, 'uptime', s.startedAt ? formatDuration((now - Date.parse(s.startedAt)) / 1000) : '—');
  setField(inst.card, 'checkin', s.lastCheckinAt ? `${formatDuration((now - Date.parse(s.lastCheckinAt)) / 1000)} ago` : 'never');
}

// --- actions ----------------------------------------------------------------------------------------------------

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

async function runAction(key, action, button) {
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

// --- update progress --------------------------------------------------------------------------------------------

function showUpdate(inst, e) {
  const box = $('.update', inst.card);
  const bar = /** @type {HTMLProgressElement} */ ($('.update-bar', box));
  const label = $('.update-label', box);
  clearTimeout(inst.updateHideTimer);
  box.hidden = false;
  box.dataset.phase = e.phase;
  const known = typeof e.total === 'number' && e.total > 0;
  if (e.phase === 'download' && known) bar.value = Math.min(1, (e.bytes ?? 0) / e.total);
  else if (e.phase === 'done') bar.value = 1;
  else bar.removeAttribute('value'); // indeterminate
  const texts = {
    check: 'checking for an update…',
    download: `downloading ${formatBytes(e.bytes ?? 0)}${known ? ` of ${formatBytes(e.total)}` : ''}`,
    verify: 'verifying the download…',
    extract: 'extracting…',
    install: 'installing…',
    done: `update installed${e.revision ? `: ${e.revision}` : ''}`,
    none: 'already up to date',
    failed: `update failed: ${e.error ?? 'unknown error'}`,
  };
  label.textContent = texts[e.phase] ?? e.phase;
  bar.hidden = e.phase === 'none' || e.phase === 'failed';
  if (e.phase === 'done' || e.phase === 'none') inst.updateHideTimer = setTimeout(() => (box.hidden = true), 5000);
}

// --- server log -------------------------------------------------------------------------------------------------

async function loadLog(inst) {
  try {
    const res = await fetch(`/api/instances/${encodeURIComponent(inst.key)}/log?n=100`);
    if (!res.ok) throw new Error(`${res.status}`);
    const { lines } = await res.json();
    inst.log = lines;
  } catch {
    inst.log = ['(the server log could not be read)'];
  }
  // Lines streamed while the tail was read may already be in it: skip the overlap.
  let overlap = Math.min(inst.pendingLog.length, inst.log.length);
  while (overlap > 0 && inst.log.slice(-overlap).join('\n') !== inst.pendingLog.slice(0, overlap).join('\n')) overlap--;
  inst.logLoaded = true;
  appendLog(inst, inst.pendingLog.slice(overlap));
  inst.pendingLog = [];
}

function appendLog(inst, lines) {
  if (!inst.logLoaded) {
    inst.pendingLog.push(...lines);
    return;
  }
  inst.log.push(...lines);
  if (inst.log.length > MAX_LOG_LINES) inst.log.splice(0, inst.log.length - MAX_LOG_LINES);
  const pre = $('.log-lines', inst.card);
  const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.textContent = inst.log.join('\n');
  if (atBottom) pre.scrollTop = pre.scrollHeight;
}

// --- statechart -------------------------------------------------------------------------------------------------

async function loadChart() {
  const holder = $('#chart');
  try {
    const res = await fetch('/dashboard/chart.svg');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const doc = new DOMParser().parseFromString(await res.text(), 'image/svg+xml');
    const svg = doc.documentElement;
    if (svg.nodeName !== 'svg') throw new Error('not an SVG document');
    holder.replaceChildren(document.importNode(svg, true));
    chartReady = true;
    highlightChart();
  } catch (err) {
    holder.textContent = `The statechart could not be loaded (${err instanceof Error ? err.message : String(err)}).`;
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Marks each instance's state node: filled in the instance's colour, with a tag of instance keys above it. */
function highlightChart() {
  if (!chartReady) return;
  const svg = $('#chart svg');
  for (const node of svg.querySelectorAll('g.node.active')) {
    node.classList.remove('active');
    node.removeAttribute('data-instances');
    node.style.removeProperty('--highlight');
  }
  for (const tag of svg.querySelectorAll('g.instance-tag')) tag.remove();
  // Badges go last in the drawing's top group (nodes share its coordinates), so no edge is drawn over them.
  const layer = svg.querySelector('g.graph') ?? svg;
  const byState = new Map();
  for (const inst of [...instances.values()].sort((a, b) => a.key.localeCompare(b.key))) {
    if (!inst.status) continue;
    const list = byState.get(inst.status.state) ?? [];
    list.push(inst);
    byState.set(inst.status.state, list);
  }
  for (const [state, list] of byState) {
    const node = svg.getElementById(NODE_PREFIX + state);
    if (!node) continue;
    node.classList.add('active');
    node.dataset.instances = list.map((i) => i.key).join(' ');
    node.style.setProperty('--highlight', list[0].color);
    // Badges measured before any is added, so the node's own box places them all.
    const box = node.getBBox();
    let x = box.x;
    for (const inst of list) {
      const tag = document.createElementNS(SVG_NS, 'g');
      tag.setAttribute('class', 'instance-tag');
      const rect = document.createElementNS(SVG_NS, 'rect');
      const text = document.createElementNS(SVG_NS, 'text');
      text.textContent = inst.key;
      text.setAttribute('y', String(box.y - 8));
      rect.setAttribute('fill', inst.color);
      rect.setAttribute('rx', '4');
      tag.append(rect, text);
      layer.append(tag);
      const width = text.getComputedTextLength() + 10;
      text.setAttribute('x', String(x + 5));
      rect.setAttribute('x', String(x));
      rect.setAttribute('y', String(box.y - 22));
      rect.setAttribute('width', String(width));
      rect.setAttribute('height', '18');
      x += width + 4;
    }
  }
}

// --- event list -------------------------------------------------------------------------------------------------

function describe(type, e) {
  switch (type) {
    case 'instance:state': return `state ${e.previous ?? '(new)'} → ${e.state}`;
    case 'instance:alert': return `alert (${e.kind}): ${e.message}`;
    case 'instance:restart': return `restarting (${e.reason})`;
    case 'instance:launch': return `server launched, pid ${e.pid}${e.revision ? `, revision ${e.revision}` : ''}`;
    case 'instance:exit': {
      const how = e.status.signal ? `signal ${e.status.signal}` : `code ${e.status.code}`;
      return `server pid ${e.pid} exited with ${how}`;
    }
    case 'instance:update': return `update ${e.phase}${e.revision ? ` (${e.revision})` : ''}${e.error ? `: ${e.error}` : ''}`;
    case 'control': return `${e.action} ${e.result} (${e.status}) by ${e.user ?? 'a local client'}${e.remote ? ` from ${e.remote}` : ''}`;
    default: return type;
  }
}

function addEvent(type, e) {
  const li = document.createElement('li');
  li.dataset.type = type;
  li.dataset.key = e.key;
  const time = document.createElement('time');
  time.dateTime = new Date(e.at).toISOString();
  time.textContent = clockTime(e.at);
  const key = document.createElement('span');
  key.className = 'event-key';
  const color = instances.get(e.key)?.color;
  if (color) key.style.setProperty('--instance-color', color);
  key.textContent = e.key;
  const text = document.createElement('span');
  text.className = 'event-text';
  text.textContent = describe(type, e);
  li.append(time, key, text);
  const list = $('#events');
  list.prepend(li);
  while (list.children.length > MAX_EVENTS) list.lastElementChild.remove();
}

// --- live connection --------------------------------------------------------------------------------------------

function setConnection(state, text) {
  const el = $('#conn');
  el.dataset.state = state;
  el.textContent = text;
}

function onEvent(type, e) {
  if (e.instance) applyStatus(e.instance);
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
}

function connect() {
  const source = new EventSource('/events?logs=1');
  source.addEventListener('open', () => setConnection('live', 'live'));
  source.addEventListener('hello', (m) => {
    const hello = JSON.parse(m.data);
    skewMs = hello.now - Date.now();
    $('#version').textContent = `v${hello.version}`;
    reconcile(hello.instances);
    $('#events').replaceChildren();
    for (const { type, event } of hello.recent ?? []) addEvent(type, event);
    setConnection('live', 'live');
  });
  for (const type of EVENT_TYPES) source.addEventListener(type, (m) => onEvent(type, JSON.parse(m.data)));
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
    const res = await fetch('/api/instances');
    if (res.ok) reconcile(await res.json());
  } catch {
    // The event stream shows the connection state; the next refresh tries again.
  }
}

document.addEventListener('DOMContentLoaded', () => {
  void loadChart();
  connect();
  setInterval(() => { for (const inst of instances.values()) renderAges(inst); }, 1000);
  setInterval(() => void refresh(), 10_000);
});
