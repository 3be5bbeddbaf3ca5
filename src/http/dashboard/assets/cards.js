// One card per instance: its facts, buttons, update progress and server log.
import { runAction } from './actions.js';
import { highlightChart } from './chart.js';
import { $, formatBytes, formatDuration, instances, serverNow } from './shared.js';

const PALETTE = ['#1e88e5', '#d81b60', '#43a047', '#8e24aa', '#f4511e', '#00897b', '#6d4c41', '#3949ab'];
const MAX_LOG_LINES = 300;
let colorIndex = 0;

export function ensureInstance(key) {
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

export function removeInstance(key) {
  const inst = instances.get(key);
  if (!inst) return;
  inst.card.remove();
  instances.delete(key);
  highlightChart();
}

export function applyStatus(status) {
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

export function renderAges(inst) {
  const s = inst.status;
  if (!s) return;
  const now = serverNow();
  setField(inst.card, 'uptime', s.startedAt ? formatDuration((now - Date.parse(s.startedAt)) / 1000) : '—');
  setField(inst.card, 'checkin', s.lastCheckinAt ? `${formatDuration((now - Date.parse(s.lastCheckinAt)) / 1000)} ago` : 'never');
}

export function showUpdate(inst, e) {
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

export function appendLog(inst, lines) {
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
