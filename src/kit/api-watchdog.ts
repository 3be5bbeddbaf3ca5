import { createHash, timingSafeEqual } from 'node:crypto';
import type { Info } from './schemas.ts';

/*
 * The token-protected half of the game-server API, as the engine's `WatchdogApi.cs` serves it, free of any HTTP
 * framework; with `/info`'s wire form, so a game server writes its info without loading valibot.
 */

export const UPDATE_REASONS = ['Other', 'UpdateAvailable', 'Maintenance'] as const;
export type UpdateReason = (typeof UPDATE_REASONS)[number];

export interface UpdateRequest {
  reason: UpdateReason;
  message: string | null;
}

export interface ShutdownRequest {
  /** `Reason` from the body; null when the body was `{}`. */
  reason: string | null;
}

/** Compares secrets in constant time: SHA-256 of both sides first, so lengths do not leak either. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * The `WatchdogToken` header against `watchdog.token`: unset token → 404 (as the engine), header missing → 400 (the
 * engine's /update throws, a 500), wrong → 401, each with the engine's plain-text body; undefined when allowed.
 */
export function checkWatchdogToken(
  header: string | undefined,
  expected: string | undefined,
): { status: 400 | 401 | 404; body: string } | undefined {
  if (!expected) return { status: 404, body: 'Not Found' };
  if (header === undefined) return { status: 400, body: 'Expected WatchdogToken header' };
  if (!sameSecret(header, expected)) return { status: 401, body: 'Unauthorized' };
  return undefined;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** A JSON object whatever the Content-Type (the real watchdog sends `text/plain`), each of `fields` a string or null. */
function parseObject<K extends string>(text: string, shape: string, fields: K[]): Parsed<Record<K, string | null>> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `body is not valid JSON: ${(err as Error).message}` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { ok: false, error: `body must be ${shape}` };
  const value = {} as Record<K, string | null>;
  for (const field of fields) {
    const x = (json as Record<string, unknown>)[field] ?? null;
    if (x !== null && typeof x !== 'string') return { ok: false, error: `${field} must be a string` };
    value[field] = x;
  }
  return { ok: true, value };
}

export function parseShutdownBody(text: string): Parsed<ShutdownRequest> {
  const body = parseObject(text, 'a JSON object such as {"Reason":"maintenance"}', ['Reason']);
  return body.ok ? { ok: true, value: { reason: body.value.Reason } } : body;
}

/** Numbers too, as .NET's enum parse ("2" → Maintenance). */
function updateReason(value: string): UpdateReason {
  if ((UPDATE_REASONS as readonly string[]).includes(value)) return value as UpdateReason;
  const n = /^\d+$/.test(value) ? Number(value) : -1;
  return UPDATE_REASONS[n] ?? 'Other';
}

/**
 * Empty → UpdateAvailable (what the watchdog sends); an unknown `Reason` → Other. Read whatever the Content-Type
 * (the engine drops a body unless exactly `application/json`).
 */
export function parseUpdateBody(text: string): Parsed<UpdateRequest> {
  if (text.trim() === '') return { ok: true, value: { reason: 'UpdateAvailable', message: null } };
  const body = parseObject(text, 'empty or a JSON object such as {"Reason":"Maintenance"}', ['Reason', 'Message']);
  if (!body.ok) return body;
  return { ok: true, value: { reason: updateReason(body.value.Reason ?? 'Other'), message: body.value.Message } };
}

/** Either spelling, or '' (launchers then derive it). */
export function connectAddressOf(info: Pick<Info, 'connect_address' | 'connect_addrees'>): string {
  return info.connect_address ?? info.connect_addrees ?? '';
}

/** The connect address under both spellings, first. */
export function infoForWire(info: Info): Info {
  const { connect_address: _engine, connect_addrees: _spec, ...rest } = info;
  const address = connectAddressOf(info);
  return { connect_address: address, connect_addrees: address, ...rest };
}
