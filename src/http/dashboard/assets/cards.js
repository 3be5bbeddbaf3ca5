// One card per instance: its facts, buttons, update progress and server log. The daemon sends the page with the
// cards already filled in (page.ts, by the rules in card-view.js); this module adopts them and keeps them current.
import { runAction, sendConsole } from './actions.js';
import { refreshBackups, wireBackups } from './backups.js';
import {
  ACTIONS,
  actionBlockers,
  actionLabel,
  cardFields,
  PALETTE_SIZE,
  panelsAllowed,
  shownName,
  stateGroup,
} from './card-view.js';
import { highlightChart } from './chart.js';
import { attachFilesPanel } from './files-panel.js';
import { $, formatBytes, formatDuration, instances, rightsOf, serverNow, stateNames } from './shared.js';

const MAX_LOG_LINES = 300;

/** A card the page adds itself takes the first colour slot no other card holds (the daemon numbers them by key). */
function freeColor() {
  const used = new Set([...instances.values()].map((i) => i.card.dataset.color));
  for (let i = 0; i < PALETTE_SIZE; i++) if (!used.has(String(i))) return String(i);
  return String(instances.size % PALETTE_SIZE);
}

export function ensureInstance(key) {
  let inst = instances.get(key);
  if (inst) return inst;
  const list = $('#instances');
  let card = [...list.children].find((el) => el.dataset.key === key);
  if (!card) {
    card = /** @type {HTMLElement} */ (
      /** @type {HTMLTemplateElement} */ ($('#instance-card')).content.firstElementChild.cloneNode(true)
    );
    card.dataset.key = key;
    card.dataset.color = freeColor();
    $('.key', card).textContent = key;
    const after = [...list.children].find((el) => el.dataset.key > key);
    list.insertBefore(card, after ?? null);
  }
  inst = {
    key,
    // The colour is the stylesheet's (style.css maps data-color), read where the chart and the event list need it.
    get color() {
      return getComputedStyle(card).getPropertyValue('--instance-color').trim();
    },
    status: null,
    card,
    log: [],
    logLoaded: false,
    pendingLog: [],
    busy: false,
  };
  for (const button of card.querySelectorAll('button[data-action]')) {
    button.addEventListener('click', async () => {
      inst.busy = true;
      renderButtons(inst);
      try {
        // One button holds and releases: its label says which (card-view.js actionLabel).
        const label = button.textContent;
        await runAction(key, label === 'Release' ? 'release' : button.dataset.action, label);
      } finally {
        inst.busy = false;
        renderButtons(inst);
      }
    });
  }
  const form = /** @type {HTMLFormElement} */ ($('form.console', card));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = /** @type {HTMLInputElement} */ (form.elements.namedItem('command'));
    if (input.value.trim() === '') return;
    input.disabled = true;
    try {
      if (await sendConsole(key, input.value, $('.console-result', form))) input.value = '';
    } finally {
      input.disabled = false;
      input.focus();
    }
  });
  wireBackups(card, key);
  attachFilesPanel(card, key);
  instances.set(key, inst);
  if (panelsAllowed(rightsOf(key)).log) void loadLog(inst);
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
  refreshBackups(inst.card, status.key, inst.status, status);
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
  const name = $('.name', card);
  name.textContent = shownName(s);
  name.title = shownName(s);
  const pill = $('.state-pill', card);
  pill.dataset.group = stateGroup(s.state);
  // The operator's name for it, as the chart shows it.
  pill.title = stateNames.get(s.state) ?? '';
  const fields = cardFields(s, serverNow());
  for (const field of ['state', 'pid', 'revision', 'cpu', 'memory', 'players', 'restarts', 'failures', 'backup'])
    setField(card, field, fields[field]);
  card.dataset.state = s.state;
  // Each panel only where the client holds its right (GET /api/me); the daemon refuses it elsewhere anyway.
  const panels = panelsAllowed(rightsOf(inst.key));
  $('details.log', card).hidden = !panels.log;
  $('details.backups', card).hidden = !panels.backups;
  $('.backup-now', card).hidden = !panels.backupNow;
  $('details.files', card).hidden = !panels.files;
  // The console panel only where the instance enables it (Console) and the client may send to it.
  $('form.console', card).hidden = s.console !== true || !panels.console;
  renderAges(inst);
  renderButtons(inst);
}

/** Each button enabled only where its action applies (card-view.js), and none while one of them is being sent. */
function renderButtons(inst) {
  if (!inst.status) return;
  const blockers = actionBlockers(inst.status, rightsOf(inst.key));
  for (const action of ACTIONS) {
    const button = /** @type {HTMLButtonElement | null} */ (inst.card.querySelector(`button[data-action="${action}"]`));
    if (!button) continue;
    button.disabled = inst.busy || blockers[action] !== '';
    button.title = blockers[action];
    const label = actionLabel(action, inst.status);
    if (button.textContent !== label) button.textContent = label;
  }
}

export function renderAges(inst) {
  const s = inst.status;
  if (!s) return;
  const fields = cardFields(s, serverNow());
  setField(inst.card, 'uptime', fields.uptime);
  setField(inst.card, 'checkin', fields.checkin);
  setField(inst.card, 'lastExit', fields.lastExit);
  setField(inst.card, 'maintenance', fields.maintenance);
  // Only in Agones mode: the GameServer this instance is wrapped as.
  setField(inst.card, 'agones', fields.agones);
  const agonesRow = inst.card.querySelector('[data-row="agones"]');
  if (agonesRow) agonesRow.hidden = fields.agones === '';
  // Only while a server that advertises runs: whether its hubs list it.
  setField(inst.card, 'hub', fields.hub);
  const hubRow = inst.card.querySelector('[data-row="hub"]');
  if (hubRow) hubRow.hidden = fields.hub === '';
}

/** `, 4.1 MB/s, about 45s left` once half a second of a download is seen; '' before. */
function rateText(start, e, known) {
  const seconds = start ? (e.at - start.at) / 1000 : 0;
  if (!start || seconds < 0.5 || !e.bytes) return '';
  const rate = e.bytes / seconds;
  const left = known && e.total >= e.bytes ? `, about ${formatDuration((e.total - e.bytes) / rate)} left` : '';
  return `, ${formatBytes(Math.round(rate))}/s${left}`;
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
  // The download's start, by the daemon's clock (`at`): a start (no bytes yet) or a smaller count begins afresh.
  if (e.phase !== 'download') inst.download = null;
  else if (!inst.download || !e.bytes || e.bytes < inst.download.bytes)
    inst.download = { at: e.at, bytes: e.bytes ?? 0 };
  else inst.download.bytes = e.bytes;
  const texts = {
    check: 'checking for an update…',
    download: `downloading ${formatBytes(e.bytes ?? 0)}${known ? ` of ${formatBytes(e.total)}` : ''}${rateText(inst.download, e, known)}`,
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
