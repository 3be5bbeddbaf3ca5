import { createHash, randomBytes } from 'node:crypto';

/** The visible prefix of every key, so one pasted in the wrong place is recognisable (and findable by scanners). */
const PREFIX = 'wdk_';
/** `wdk_<id>_<secret>`: the id finds the stored entry, the secret is 32 random bytes. */
const KEY_FORMAT = /^wdk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewApiKey {
  id: string;
  /** The whole key, shown once. */
  key: string;
  /** What is stored: `sha256$<hex>` of the whole key. */
  hash: string;
}

/** One SHA-256 is enough to store 32 random bytes: unlike a password, there is no dictionary to guess from. */
export const hashApiKey = (key: string): string => `sha256$${createHash('sha256').update(key, 'utf8').digest('hex')}`;

export const isApiKeyHash = (text: string): boolean => /^sha256\$[0-9a-f]{64}$/.test(text);

export function newApiKey(): NewApiKey {
  const id = randomBytes(6).toString('hex');
  const key = `${PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: hashApiKey(key) };
}

/** The id a presented key claims, or undefined for anything not shaped like one of ours. */
export const apiKeyId = (key: string): string | undefined => KEY_FORMAT.exec(key)?.[1];

/** `Authorization: Bearer <key>` → the key; undefined for another scheme or none. */
export const parseBearer = (header: string | undefined): string | undefined =>
  /^[\t ]*bearer[\t ]+(\S+)[\t ]*$/i.exec(header ?? '')?.[1];
