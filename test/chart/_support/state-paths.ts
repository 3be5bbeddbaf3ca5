/** The leaf states a status can show, in the machine's order (what `statePaths()` must return). */
export const STATUS_PATHS = [
  'stopped.idle',
  'stopped.failing',
  'updating',
  'starting',
  'running',
  'awaiting-checkin',
  'restarting.stopping',
  'restarting.backoff',
  'restarting.blocked',
  'rolling-back',
  'exited',
];
