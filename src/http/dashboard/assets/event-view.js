// What a row of the event list says, as pure functions of the event: used by the page (event-list.js) and by the
// daemon, which renders the recent events into the first HTML response (../page.ts), so both say the same.

/** The row's text; `time` formats an epoch-ms instant (the page shows local time, the daemon UTC). */
export function eventText(type, e, time) {
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
    case 'instance:maintenance-pending':
      return e.kind === 'hold'
        ? `maintenance held until ${time(e.until)}${e.reason ? `: ${e.reason}` : ''}`
        : `${e.kind} pending (${e.when})`;
    case 'instance:maintenance-done':
      return `${e.kind} ${e.how}`;
    case 'instance:launch-blocked':
      return `cannot launch: ${e.message}; retry ${e.attempts} in ${Math.round(e.retryMs / 100) / 10} s`;
    case 'instance:launch-unblocked':
      return `launched again after ${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`;
    case 'instance:control':
      return `${e.action} ${e.result} (${e.status}) by ${e.user ?? 'a local client'}${e.remote ? ` from ${e.remote}` : ''}`;
    default:
      return type;
  }
}

/** An operator's stop comes as an alert of level info: listed, not in the alert colour. */
export function eventLevel(type, e) {
  return type === 'instance:alert' && e.level === 'info' ? 'info' : '';
}
