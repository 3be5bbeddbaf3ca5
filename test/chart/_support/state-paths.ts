/** The leaf states a status can show, in the machine's order (what `statePaths()` must return). */
export const STATUS_PATHS = [
  'stopped.idle',
  'stopped.failing',
  'updating',
  'server.starting',
  'server.running',
  'server.awaiting-checkin',
  'server.stopping',
  'restarting.backoff',
  'restarting.blocked',
  'rolling-back',
  'restoring',
  'exited',
];
