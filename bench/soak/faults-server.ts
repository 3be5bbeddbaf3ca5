import { signal } from '../lib/proc.ts';
import { pickRunning, type ServerMode, type SoakContext, setMode } from './context.ts';
import { isLive } from './procscan.ts';
import { countFault, type FaultKind } from './state.ts';

/** Server faults: a kill, a freeze (thawed or left to the daemon), and launches that misbehave by mode. */

export const SERVER_FAULTS = [
  'sigkill-server',
  'sigstop-sigcont',
  'sigstop-hang',
  'exit-at-start',
  'crash-loop',
  'ignore-shutdown',
  'slow-start',
  'fork',
  'old-secret',
] as const satisfies readonly FaultKind[];
export type ServerFault = (typeof SERVER_FAULTS)[number];

/** How long each mode stays set (ms): long enough for a few launches to see it. */
const MODE_MS: Record<Exclude<ServerMode, 'normal'>, [number, number]> = {
  'exit-at-start': [1000, 3000],
  'crash-loop': [5000, 9000],
  'ignore-shutdown': [5000, 9000],
  'slow-start': [3000, 6000],
  fork: [5000, 10_000],
  'old-secret': [4000, 8000],
};

/** Injects `kind` on a running instance; false when none was available (nothing injected). */
export function serverFault(ctx: SoakContext, kind: ServerFault, restart: (key: string) => void): boolean {
  const t = pickRunning(ctx);
  const pid = t?.status?.pid ?? null;
  if (!t || pid === null || !isLive(pid)) return false;
  const { s, rng } = ctx;
  countFault(s, kind, t.key);
  s.log(`fault ${kind} on ${t.key} (pid ${pid})`);
  if (kind === 'sigkill-server') {
    signal(pid, 'SIGKILL');
    return true;
  }
  ctx.busy.add(t.key);
  if (kind === 'sigstop-sigcont' || kind === 'sigstop-hang') {
    signal(pid, 'SIGSTOP');
    if (kind === 'sigstop-hang') {
      s.hangs.push({ key: t.key, pid, at: Date.now(), reported: false });
      ctx.later(t.timeoutSeconds * 1000 + 4000, () => void ctx.busy.delete(t.key));
    } else {
      // Thawed before the hang deadline: the daemon must not kill it.
      ctx.later(rng.between(300, Math.max(400, t.timeoutSeconds * 1000 - 2500)), () => {
        signal(pid, 'SIGCONT');
        ctx.busy.delete(t.key);
      });
    }
    return true;
  }
  setMode(s, t.key, kind);
  // The mode is read at launch: end this server so the next launch misbehaves.
  signal(pid, 'SIGKILL');
  if (kind === 'ignore-shutdown') ctx.later(rng.between(1500, 3000), () => restart(t.key));
  const [lo, hi] = MODE_MS[kind];
  ctx.later(rng.between(lo, hi), () => {
    setMode(s, t.key, 'normal');
    ctx.busy.delete(t.key);
  });
  return true;
}
