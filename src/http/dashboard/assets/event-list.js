// The list of recent events, newest first. The daemon sends the page with the recent ones already listed
// (../page.ts, by the rules in event-view.js, in UTC); the page lists them again in local time.
import { eventLevel, eventText } from './event-view.js';
import { $, clockTime, instances } from './shared.js';

const MAX_EVENTS = 200;

export function addEvent(type, e) {
  const li = document.createElement('li');
  li.dataset.type = type;
  const level = eventLevel(type, e);
  if (level) li.dataset.level = level;
  li.dataset.key = e.key;
  const time = document.createElement('time');
  time.dateTime = new Date(e.at).toISOString();
  time.textContent = clockTime(e.at);
  const key = document.createElement('span');
  key.className = 'event-key';
  // The stylesheet maps the instance's colour slot to its colour, as on the card.
  const color = instances.get(e.key)?.card.dataset.color;
  if (color) key.dataset.color = color;
  key.textContent = e.key;
  const text = document.createElement('span');
  text.className = 'event-text';
  text.textContent = eventText(type, e, clockTime);
  li.append(time, key, text);
  const list = $('#events');
  list.prepend(li);
  while (list.children.length > MAX_EVENTS) list.lastElementChild.remove();
}

/** Replaces the list with `recent` (oldest first), as `hello` and the page's inlined state carry it. */
export function listEvents(recent) {
  $('#events').replaceChildren();
  for (const { type, event } of recent ?? []) addEvent(type, event);
}
