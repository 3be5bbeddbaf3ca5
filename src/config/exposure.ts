import { basename } from 'node:path';
import { formatPath } from './issues.ts';
import { type ListenAddress, listensOnLoopbackOnly, listenUrl } from './listen.ts';
import { type ConfigPath, isMap, rawInstances } from './merge.ts';

/** Shorter tokens are guessable by anyone who can reach the port; 16 characters of a generated token is ~96 bits. */
export const MIN_EXPOSED_TOKEN_LENGTH = 16;

/** Tokens from this repository's examples, known to anyone who read them; and any that says to change it. */
export const EXAMPLE_TOKENS: ReadonlySet<string> = new Set(['demo-token-change-me', 'change-me-community-token']);
const SAYS_CHANGE_ME = /change[-_ ]?me/i;

export type ExposedTokenPolicy = 'refuse' | 'warn';

const ALLOW_WEAK_TOKENS_FLAG = '--allow-weak-tokens';

/** A line per instance whose token is an example or short while `Urls` reaches beyond this machine; never the token. */
export function exposedTokenLines(
  raw: Record<string, unknown>,
  listen: ListenAddress[] | undefined,
  tokenFiles: ReadonlyMap<string, string>,
  sourceOf: (p: ConfigPath) => string,
  policy: ExposedTokenPolicy,
): string[] {
  const open = (listen ?? []).filter((a) => !listensOnLoopbackOnly(a));
  if (open.length === 0) return [];
  const where = open.map(listenUrl).join(', ');
  const lines: string[] = [];
  for (const [key, inst] of Object.entries(rawInstances(raw))) {
    if (!isMap(inst)) continue;
    const fromFile = tokenFiles.get(key);
    const token = fromFile ?? (typeof inst.ApiToken === 'string' ? inst.ApiToken : undefined);
    if (token === undefined) continue;
    const why =
      EXAMPLE_TOKENS.has(token) || SAYS_CHANGE_ME.test(token)
        ? 'is the example from the documentation'
        : token.length < MIN_EXPOSED_TOKEN_LENGTH
          ? `is shorter than ${MIN_EXPOSED_TOKEN_LENGTH} characters`
          : null;
    if (why === null) continue;
    const path = ['Servers', 'Instances', key, fromFile === undefined ? 'ApiToken' : 'ApiTokenFile'];
    const then =
      policy === 'refuse'
        ? `watchdog start refuses it; set a long random token (openssl rand -hex 24), listen on localhost, or start with ${ALLOW_WEAK_TOKENS_FLAG}`
        : `watchdog start will refuse it without ${ALLOW_WEAK_TOKENS_FLAG}; set a long random token (openssl rand -hex 24) or listen on localhost`;
    lines.push(
      `${sourceOf(path)}: ${formatPath(path)}: the token ${why} and Urls listens beyond this machine (${where}): ${then}`,
    );
  }
  return lines;
}

/** The engine's check-in period: fixed at 15 s in RobustToolbox's watchdog API, not a setting. */
const ENGINE_CHECKIN_SECONDS = 15;

/**
 * An engine server checks in every 15 s; with `TimeoutSeconds` under two periods the daemon declares it late
 * (`server.awaiting-checkin`, at half the timeout) between two ordinary check-ins, and logs it every time.
 */
export function engineTimeoutLines(raw: Record<string, unknown>, sourceOf: (p: ConfigPath) => string): string[] {
  const lines: string[] = [];
  for (const [key, inst] of Object.entries(rawInstances(raw))) {
    const run = isMap(inst) ? inst.RunCommand : undefined;
    // The engine's server: the default `RunCommand`, or a program named Robust.Server.
    const engine = run === undefined || (typeof run === 'string' && /^Robust\.Server(\.exe)?$/i.test(basename(run)));
    if (!isMap(inst) || !engine) continue;
    const timeout = inst.TimeoutSeconds;
    if (typeof timeout !== 'number' || timeout >= 2 * ENGINE_CHECKIN_SECONDS) continue;
    const path = ['Servers', 'Instances', key, 'TimeoutSeconds'];
    lines.push(
      `${sourceOf(path)}: ${formatPath(path)}: ${timeout} is under ${2 * ENGINE_CHECKIN_SECONDS}: the engine checks in every ${ENGINE_CHECKIN_SECONDS} s, so the instance would be reported late (server.awaiting-checkin) between ordinary check-ins${timeout <= ENGINE_CHECKIN_SECONDS ? ' and killed as hung' : ''}; use 30 or more (the default is 90)`,
    );
  }
  return lines;
}
