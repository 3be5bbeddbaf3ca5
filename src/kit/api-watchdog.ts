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

/** The status and plain-text body the engine answers a refusal with. */
interface Refusal {
  status: 400 | 401 | 404;
  body: string;
}

/**
 * The `WatchdogToken` header against `watchdog.token`: unset token → 404 (as the engine), header missing → 400 (the
 * engine's /update throws, a 500), wrong → 401; undefined when allowed.
 */
export function checkWatchdogToken(header: string | undefined, expected: string | undefined): Refusal | undefined {
  if (!expected) return { status: 404, body: 'Not Found' };
  if (header === undefined) return { status: 400, body: 'Expected WatchdogToken header' };
  if (!sameSecret(header, expected)) return { status: 401, body: 'Unauthorized' };
  return undefined;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function parseJson(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `body is not valid JSON: ${(err as Error).message}` };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON object whatever the Content-Type (the real watchdog sends `text/plain`), with an optional `Reason`. */
export function parseShutdownBody(text: string): Parsed<ShutdownRequest> {
  const json = parseJson(text);
  if (!json.ok) return json;
  if (!isObject(json.value)) return { ok: false, error: 'body must be a JSON object such as {"Reason":"maintenance"}' };
  const reason = json.value.Reason;
  if (reason !== undefined && reason !== null && typeof reason !== 'string')
    return { ok: false, error: 'Reason must be a string' };
  return { ok: true, value: { reason: reason ?? null } };
}

/** Numbers too, as .NET's enum parse ("2" → Maintenance). */
function updateReason(value: string): UpdateReason {
  if ((UPDATE_REASONS as readonly string[]).includes(value)) return value as UpdateReason;
  const n = /^\d+$/.test(value) ? Number(value) : -1;
  return UPDATE_REASONS[n] ?? 'Other';
}

/**
 * Empty → UpdateAvailable (what the watchdog sends); else a JSON object with optional `Reason` (unknown → Other) and
 * `Message`, whatever the Content-Type (the engine drops it unless exactly `application/json`).
 */
export function parseUpdateBody(text: string): Parsed<UpdateRequest> {
  if (text.trim() === '') return { ok: true, value: { reason: 'UpdateAvailable', message: null } };
  const json = parseJson(text);
  if (!json.ok) return json;
  if (!isObject(json.value))
    return { ok: false, error: 'body must be empty or a JSON object such as {"Reason":"Maintenance"}' };
  const { Reason: reason, Message: message } = json.value;
  if (reason !== undefined && reason !== null && typeof reason !== 'string')
    return { ok: false, error: 'Reason must be a string' };
  if (message !== undefined && message !== null && typeof message !== 'string')
    return { ok: false, error: 'Message must be a string' };
  return { ok: true, value: { reason: updateReason(reason ?? 'Other'), message: message ?? null } };
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
