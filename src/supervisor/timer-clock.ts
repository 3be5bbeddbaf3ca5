/** The check-in coalescer's clock: the cron timer's (`cron-timer.ts`). */
export { realClock, type TimerClock } from './cron-timer.ts';
