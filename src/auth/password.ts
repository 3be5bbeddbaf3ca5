import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** 16.8 MB of memory and some 50 ms per check: slow for a guesser, quick enough per request. N is a power of two. */
const DEFAULT_COST = { N: 16384, r: 8, p: 1 };
type ScryptCost = typeof DEFAULT_COST;

const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** `scrypt$N=16384,r=8,p=1$<salt>$<hash>`, salt and hash in base64 without padding. */
const HASH_FORMAT = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]{16,})\$([A-Za-z0-9+/]{32,})$/;
/** Bounds on stored costs, so a hand-edited file can neither weaken a hash to nothing nor stall each request. */
const MIN_N = 1024;
const MAX_N = 1 << 20;

function parseHash(text: string) {
  const m = HASH_FORMAT.exec(text);
  if (!m) return undefined;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  const powerOfTwo = (cost.N & (cost.N - 1)) === 0;
  if (!powerOfTwo || cost.N < MIN_N || cost.N > MAX_N || cost.r < 1 || cost.r > 32 || cost.p < 1 || cost.p > 16)
    return undefined;
  return { cost, salt: Buffer.from(m[4] ?? '', 'base64'), hash: Buffer.from(m[5] ?? '', 'base64') };
}

/** Whether `text` is a hash this module wrote (and not, say, a password typed into the file). */
export const isPasswordHash = (text: string): boolean => parseHash(text) !== undefined;

function derive(password: string, salt: Buffer, cost: ScryptCost, length: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node's default cap is 32 MiB, so the cap follows the cost.
  const maxmem = 256 * cost.N * cost.r;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, { ...cost, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

/** A new hash string of `password` with a fresh random salt; the cost is only lowered by tests. */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, cost, KEY_BYTES);
  return `scrypt$N=${cost.N},r=${cost.r},p=${cost.p}$${b64(salt)}$${b64(hash)}`;
}

/** Whether `password` matches `stored`, compared in constant time; false for a string that is not a hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const given = await derive(password, parsed.salt, parsed.cost, parsed.hash.length);
  return timingSafeEqual(given, parsed.hash);
}
