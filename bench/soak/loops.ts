import { MESSAGES_PER_EPISODE } from './bounds.ts';
import type { SoakContext } from './context.ts';
import { controlBurst, controlSameMoment, control, heal } from './faults-control.ts';
import { SERVER_FAULTS, type ServerFault, serverFault } from './faults-server.ts';
import {
  UPDATE_FAULTS,
  type UpdateFault,
  updateFault,
  WEBHOOK_FAULTS,
  type WebhookFault,
  webhookFault,
} from './faults-updates.ts';
import type { LagReference } from './lag-reference.ts';
import type { Plan } from './plan.ts';
import type { Setup } from './setup.ts';
import { check, type FaultKind } from './state.ts';
import { scanTick } from './watch-procs.ts';
import { filesTick, metricsTick, statusTick } from './watch-status.ts';
import { daemonKill, reload } from './world.ts';

/** The two loops of a run: the watcher (invariants, continuously) and the injector (faults, on the plan). */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Every delivered chat message is owed to an episode on its instance: no flood. */
export function chatBounded(ctx: SoakContext, setup: Setup): void {
  for (const t of ctx.s.tracks.values()) {
    const got = setup.hook.delivered.get(t.key) ?? 0;
    const bound = MESSAGES_PER_EPISODE * (t.episodes + 1);
    check(ctx.s, 'chat-bounded', got <= bound, () => `${t.key}: ${got} chat messages for ${t.episodes} episodes`);
  }
}

export async function watchLoop(ctx: SoakContext, setup: Setup, endAt: number, reference: LagReference): Promise<void> {
  let tick = 0;
  let lastStart: number | null = null;
  // Bounded: one turn per 500 ms until the end.
  while (Date.now() < endAt) {
    const at = Date.now();
    scanTick(ctx.s);
    if (tick % 2 === 0) {
      await statusTick(ctx.s);
      filesTick(ctx.s, setup.known);
    }
    if (tick % 10 === 0) {
      // The first scrape after a daemon start covers its start-up; lag is counted from the second on.
      const fresh = ctx.s.daemonReadyAt !== lastStart;
      lastStart = ctx.s.daemonReadyAt;
      await metricsTick(ctx.s, !fresh, reference.read);
      chatBounded(ctx, setup);
    }
    tick++;
    await sleep(500 - (Date.now() - at));
  }
}

async function inject(ctx: SoakContext, setup: Setup, kind: FaultKind): Promise<boolean> {
  if ((SERVER_FAULTS as readonly string[]).includes(kind))
    return serverFault(ctx, kind as ServerFault, (key) => void control(ctx.s, key, 'restart'));
  // What goes through the daemon waits for one that answers (a restart may be under way).
  if (ctx.s.daemonReadyAt === null && !(kind in WEBHOOK_FAULTS)) return false;
  if (kind === 'control-burst') await controlBurst(ctx);
  else if (kind === 'control-same-moment') await controlSameMoment(ctx);
  else if (kind === 'config-reload') reload(ctx, setup.world);
  else if (kind in UPDATE_FAULTS) await updateFault(ctx, setup.cdn, setup.pending, kind as UpdateFault);
  else if (kind in WEBHOOK_FAULTS) webhookFault(ctx, setup.hook, kind as WebhookFault);
  return true;
}

/** The daemon SIGKILLs and restarts, on their own schedule: other faults go on meanwhile, as they would. */
export async function daemonLoop(ctx: SoakContext, setup: Setup, plan: Plan): Promise<void> {
  for (const due of plan.daemonKills) {
    await sleep(ctx.s.startedAt + due.atMs - Date.now());
    await daemonKill(ctx, setup.world, due.persist);
  }
}

export async function faultLoop(ctx: SoakContext, setup: Setup, plan: Plan, endAt: number): Promise<void> {
  // Let the first daemon bring its servers up before the first fault.
  await sleep(3000);
  const deferred: FaultKind[] = [];
  for (let n = 0; n < 100_000 && Date.now() < endAt - plan.quietMs; n++) {
    const at = Date.now();
    // A kind that cannot be injected now (no running instance free, the daemon restarting) is deferred and tried
    // first next turn; meanwhile the next kind of the plan is tried instead (at most three a turn).
    const tried = deferred.splice(0);
    for (let i = 0; i < 3; i++) {
      const kind: FaultKind = tried.shift() ?? plan.next();
      if (await inject(ctx, setup, kind)) break;
      deferred.push(kind);
    }
    deferred.push(...tried);
    if (n % 3 === 0) await heal(ctx, 4000);
    await sleep(plan.everyMs - (Date.now() - at));
  }
}
