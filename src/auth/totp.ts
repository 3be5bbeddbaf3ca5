import { createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from '../kit/api-watchdog.ts';

/** RFC 6238 as authenticator apps use it by default: HMAC-SHA-1, 6 digits, 30-second steps from the Unix epoch. */
const STEP_MS = 30_000;
const DIGITS = 6;
/** Steps either side of now a code may come from: a phone's clock a little off, a code typed as it changed. */
const WINDOW = 1;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** 160 bits, the size RFC 4226 recommends; enrollment makes secrets this long (32 base32 characters). */
const SECRET_BYTES = 20;

/** Upper-case RFC 4648 base32 without padding, 128 bits (the least RFC 4226 allows) to 512. */
export const isTotpSecret = (text: string): boolean => /^[A-Z2-7]{26,103}$/.test(text);

export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Upper-case base32 without padding → its bytes; throws on any other character. */
export function base32Decode(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    const index = ALPHABET.indexOf(ch);
    if (index < 0) throw new Error(`"${ch}" is not a base32 character (A-Z, 2-7)`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 HOTP: the `digits`-digit code of `key` at `counter`, zero-padded. */
export function hotp(key: Uint8Array, counter: number, digits = DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

export const stepAt = (nowMs: number): number => Math.floor(nowMs / STEP_MS);

/** The code of `secret` (base32) at `nowMs`: what an authenticator app shows. */
export const totpAt = (secret: string, nowMs: number, digits = DIGITS): string =>
  hotp(base32Decode(secret), stepAt(nowMs), digits);

/**
 * The time step whose code `code` is, within ±WINDOW steps of `nowMs`, or undefined. Every step of the window is
 * computed and compared in constant time, so how long it takes says nothing of which one matched.
 */
export function matchingStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const key = base32Decode(secret);
  const now = stepAt(nowMs);
  let found: number | undefined;
  for (let step = now - WINDOW; step <= now + WINDOW; step++)
    if (sameSecret(hotp(key, step), code) && found === undefined) found = step;
  return found;
}

export const newTotpSecret = (): string => base32Encode(randomBytes(SECRET_BYTES));

/** The `otpauth://` URI an authenticator app scans (as a QR code) or takes pasted. */
export function otpauthUri(user: string, secret: string, issuer = 'watchdog'): string {
  const label = encodeURIComponent(`${issuer}:${user}`);
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: '30' });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/**
 * The last accepted step per user, kept only while it could still match (so never more than the users file has).
 * A restart forgets it: a code used just before one is accepted once more within its 90 seconds at most.
 */
export function createTotpGuard() {
  const last = new Map<string, number>();
  return {
    /**
     * Whether `code` is `user`'s code now, from a step later than the last one accepted: a code seen once (by a
     * shoulder, a proxy log, a phishing page) is refused ever after, within its window too.
     */
    accept(user: string, secret: string, code: string, nowMs = Date.now()): boolean {
      const now = stepAt(nowMs);
      for (const [name, step] of last) if (step < now - WINDOW) last.delete(name);
      const step = matchingStep(secret, code, nowMs);
      if (step === undefined || step <= (last.get(user) ?? Number.NEGATIVE_INFINITY)) return false;
      last.set(user, step);
      return true;
    },
  };
}

/** Basic is refused for a user with a one-time code (a password would skip it), before the password is checked. */
export const TOTP_BASIC_REFUSED =
  'this user has a one-time code (TOTP): a password alone is not accepted here; log in at /login, or use an API key (Authorization: Bearer)';
