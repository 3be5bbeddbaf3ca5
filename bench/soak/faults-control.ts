import { request } from 'node:http';
import { KICK_MESSAGES } from './bounds.ts';
import { TOKEN } from './config.ts';
import type { SoakContext } from './context.ts';
import { check, countFault, kick, type SoakState } from './state.ts';

/** Control traffic: several clients at once, on several instances or all on one at the same moment. */

export const ACTIONS = ['restart', 'update', 'stop', 'rollback'] as const;
export type Action = (typeof ACTIONS)[number];

/** One client's POST /instances/<key>/<action> on its own connection (agent: false): status and body. */
function post(
  url: string,
  key: string,
  action: Action,
): Promise<{ status: number; body: string; retryAfter: boolean }> {
  return new Promise((resolve) => {
    const auth = `Basic ${Buffer.from(`${key}:${TOKEN}`).toString('base64')}`;
    const req = request(
      `${url}/instances/${key}/${action}`,
      { method: 'POST', agent: false, headers: { authorization: auth, 'content-length': '0' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString('utf8');
        });
        const retryAfter = res.headers['retry-after'] !== undefined;
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, retryAfter }));
        res.on('error', () => resolve({ status: 0, body, retryAfter }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', (err) => resolve({ status: 0, body: err.message, retryAfter: false }));
    req.end();
  });
}

/**
 * Sends one request and checks its answer: 200 (taken), 409 with `{"error": …}` (refused with a reason), or 503
 * with Retry-After for an instance the daemon is still starting (README, "HTTP API").
 */
export async function control(s: SoakState, key: string, action: Action): Promise<number> {
  const daemon = s.daemonReadyAt;
  const { status, body, retryAfter } = await post(s.daemonUrl, key, action);
  const t = s.tracks.get(key);
  // A daemon killed on purpose meanwhile explains a lost answer; the daemon that answers must answer well. A lost
  // answer may still have been carried out, and told, before the kill.
  if (s.daemonReadyAt !== daemon || s.daemonReadyAt === null) {
    if (t) t.chatAllowance += KICK_MESSAGES;
    return status;
  }
  // A daemon whose descriptor limit was lowered under its connection cap cannot accept every connection (the
  // kernel resets them): lost at the connection level then, the request was never taken.
  if (status === 0 && Date.now() < s.starvedUntil) {
    s.log(`control ${action} ${key}: no answer while the daemon is out of descriptors (${body})`);
    return status;
  }
  let reason = false;
  if (status === 409) {
    try {
      reason = typeof (JSON.parse(body) as { error?: unknown }).error === 'string';
    } catch {
      reason = false;
    }
  }
  check(
    s,
    'control-answers',
    status === 200 || reason || (status === 503 && retryAfter),
    () => `${action} ${key}: ${status} ${body.slice(0, 200)}`,
  );
  if (status === 200 && t) {
    if (action === 'stop') {
      t.chatAllowance += KICK_MESSAGES;
      t.stopRequestedAt = Date.now();
      t.touchedAt = t.stopRequestedAt;
    } else kick(s, Date.now(), key);
  }
  return status;
}

const configured = (ctx: SoakContext) => [...ctx.s.tracks.values()].filter((t) => t.configured).map((t) => t.key);

/** 2–4 clients on as many instances, each a random action, all sent at once. */
export async function controlBurst(ctx: SoakContext): Promise<void> {
  const keys = ctx.rng.sample(configured(ctx), ctx.rng.int(2, 4));
  const plan = keys.map((key) => ({ key, action: ctx.rng.pick(ACTIONS) }));
  countFault(ctx.s, 'control-burst');
  ctx.s.log(`fault control-burst ${plan.map((p) => `${p.action} ${p.key}`).join(', ')}`);
  await Promise.all(plan.map((p) => control(ctx.s, p.key, p.action)));
}

/** 2–4 clients on one instance at the same moment, with different (or the same) actions. */
export async function controlSameMoment(ctx: SoakContext): Promise<void> {
  const key = ctx.rng.pick(configured(ctx));
  const actions = Array.from({ length: ctx.rng.int(2, 4) }, () => ctx.rng.pick(ACTIONS));
  countFault(ctx.s, 'control-same-moment', key);
  ctx.s.log(`fault control-same-moment on ${key}: ${actions.join(', ')}`);
  await Promise.all(actions.map((a) => control(ctx.s, key, a)));
}

/**
 * The operator's part: an instance left stopped for a while is restarted, so the soak keeps every server busy.
 * Not one an environment fault's recovery check waits on: that one must come back without a person.
 */
export async function heal(ctx: SoakContext, stoppedForMs: number): Promise<void> {
  const now = Date.now();
  const stale = [...ctx.s.tracks.values()].filter(
    (t) =>
      t.configured && !ctx.recovering.has(t.key) && t.stoppedSeenAt !== null && now - t.stoppedSeenAt > stoppedForMs,
  );
  await Promise.all(stale.map((t) => control(ctx.s, t.key, 'restart')));
}
