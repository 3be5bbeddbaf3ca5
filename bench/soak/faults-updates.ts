import type { Build } from './builds.ts';
import type { CdnMode, SoakCdn } from './cdn.ts';
import type { SoakContext } from './context.ts';
import { control } from './faults-control.ts';
import { countFault, type FaultKind } from './state.ts';
import type { SoakWebhook, WebhookMode } from './webhook.ts';

/** Updates against the loopback CDN in each of its moods, and the chat webhook in each of its. */

export const UPDATE_FAULTS = {
  'update-ok': 'ok',
  'update-truncate': 'truncate',
  'update-wrong-hash': 'wrong-hash',
  'update-stall': 'stall',
  'update-cdn-down': 'down',
} as const satisfies Partial<Record<FaultKind, CdnMode>>;
export type UpdateFault = keyof typeof UPDATE_FAULTS;

/**
 * Publishes the next build (if any is left), puts the CDN in the fault's mood and asks 1–2 Manifest instances to
 * update. The mood lasts a few seconds (longer than DownloadTimeoutSeconds), then the CDN is well again.
 */
export async function updateFault(ctx: SoakContext, cdn: SoakCdn, pending: Build[], kind: UpdateFault): Promise<void> {
  const keys = [...ctx.s.tracks.values()].filter((t) => t.manifest && t.configured).map((t) => t.key);
  if (keys.length === 0) return;
  const next = pending.shift();
  if (next) cdn.builds.push(next);
  cdn.mode = UPDATE_FAULTS[kind];
  const targets = ctx.rng.sample(keys, ctx.rng.int(1, 2));
  for (const key of targets) countFault(ctx.s, kind, key);
  ctx.s.log(`fault ${kind}: ${next?.key ?? 'no new build'} for ${targets.join(', ')}`);
  ctx.later(4000, () => {
    if (cdn.mode === UPDATE_FAULTS[kind]) cdn.mode = 'ok';
  });
  await Promise.all(targets.map((key) => control(ctx.s, key, 'update')));
}

export const WEBHOOK_FAULTS = {
  'webhook-429': '429',
  'webhook-500': '500',
  'webhook-silent': 'silent',
} as const satisfies Partial<Record<FaultKind, WebhookMode>>;
export type WebhookFault = keyof typeof WEBHOOK_FAULTS;

/** The webhook misbehaves for 3–8 s (whatever the daemon sends meanwhile meets it), then answers again. */
export function webhookFault(ctx: SoakContext, hook: SoakWebhook, kind: WebhookFault): void {
  hook.mode = WEBHOOK_FAULTS[kind];
  countFault(ctx.s, kind);
  ctx.s.log(`fault ${kind}`);
  ctx.later(ctx.rng.between(3000, 8000), () => {
    if (hook.mode === WEBHOOK_FAULTS[kind]) hook.mode = 'ok';
  });
}
