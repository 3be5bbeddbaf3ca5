// The list of recent events, newest first.
import { $, clockTime, instances } from './shared.js';

const MAX_EVENTS = 200;

function describe(type, e) {
  switch (type) {
    case 'instance:state':
      return `state ${e.previous ?? '(new)'} → ${e.state}`;
    case 'instance:alert':
      return e.level === 'info' ? e.message : `alert (${e.kind}): ${e.message}`;
    case 'instance:restart':
      return `restarting (${e.reason})`;
    case 'instance:launch':
      return `server launched, pid ${e.pid}${e.revision ? `, revision ${e.revision}` : ''}`;
    case 'instance:update':
      return `update ${e.phase}${e.revision ? ` (${e.revision})` : ''}${e.error ? `: ${e.error}` : ''}`;
    case 'maintenance:pending':
      return e.kind === 'hold'
        ? `maintenance held until ${clockTime(e.until)}${e.reason ? `: ${e.reason}` : ''}`
        : `${e.kind} pending (${e.when})`;
    case 'maintenance:done':
      return `${e.kind} ${e.how}`;
    case 'instance:launch-blocked':
      return `cannot launch: ${e.message}; retry ${e.attempts} in ${Math.round(e.retryMs / 100) / 10} s`;
    case 'instance:launch-unblocked':
      return `launched again after ${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`;
    case 'control':
      return `${e.action} ${e.result} (${e.status}) by ${e.user ?? 'a local client'}${e.remote ? ` from ${e.remote}` : ''}`;
    default:
      return type;
  }
}

export function addEvent(type, e) {
  const li = document.createElement('li');
  li.dataset.type = type;
  // An operator's stop comes as an alert of level info: shown, not in the alert colour.
  if (type === 'instance:alert' && e.level === 'info') li.dataset.level = 'info';
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
