import { mkdir, rename, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { newApiKey } from '../../../src/auth/api-keys.ts';
import { testConfig } from '../../_support/config.ts';
import type { RunningDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { type Answer, basicAuth } from './accounts.ts';

/** Three instances, so a grant on one can be refused on two others; their tokens. */
export const INSTANCES = ['a', 'b', 'c'] as const;
export type InstanceKey = (typeof INSTANCES)[number];
export const TOKEN_OF: Record<InstanceKey, string> = {
  a: 'token-of-a-0123456789',
  b: 'token-of-b-0123456789',
  c: 'token-of-c-0123456789',
};
export const ADMIN = { user: 'root', password: 'admin-password-0123456789' } as const;
/** Every account's password: one hash, checked once a minute (the daemon remembers a match). */
export const PASSWORD = 'rights-password-1';
/** The headers the trusted proxy names its user and groups with (the defaults of `Users.TrustedHeaders: {}`). */
export const SSO = { user: 'remote-user', groups: 'remote-groups' } as const;

const NO_PROGRAM = '/nonexistent/watchdog-test-server';

/**
 * The daemon of the rights tests: instances whose program does not exist (they stay stopped, so a control request
 * let through does nothing slow), the console on (its own 403 would look like a missing right), a backup margin no
 * disk has (a snapshot let through is refused for space, 507, and writes nothing), an Admin, logins without a
 * limit that matters here, and single sign-on from the loopback.
 */
export async function rightsConfig(): Promise<string> {
  const instances = [];
  for (const key of INSTANCES) {
    instances.push({
      key,
      token: TOKEN_OF[key],
      port: await freePort(),
      runCommand: NO_PROGRAM,
      extra: ['      Console: true', '      Backups:', '        SpaceMarginMegabytes: 1000000000'].join('\n'),
    });
  }
  return testConfig({
    extra: [
      `Admin:\n  Username: ${ADMIN.user}\n  Password: ${ADMIN.password}`,
      'TrustedProxies: [127.0.0.1]',
      'Users:\n  LoginAttemptsPerMinute: 10000\n  TrustedHeaders: {}',
    ].join('\n'),
    instances,
  });
}

/** A file in each instance's shared `dumps/` folder, whose text names the instance: what a cross-instance read leaks. */
export const secretOf = (key: string) => `the secret of instance ${key}`;

/** Waits until every instance is registered (503 before), then gives each a shared file. */
export async function rightsReady(d: RunningDaemon): Promise<void> {
  for (const key of INSTANCES) {
    await waitFor(`instance ${key} to be registered`, async () => {
      const res = await fetch(`${d.url}/instances/${key}/status`, {
        headers: { authorization: basicAuth(key, TOKEN_OF[key]) },
      });
      await res.arrayBuffer();
      return res.status === 200;
    });
    const dumps = join(d.dir, 'instances', key, 'dumps');
    await mkdir(dumps, { recursive: true });
    await writeFile(join(dumps, 'note.txt'), secretOf(key));
  }
}

/** The daemon's reads of its users file, and the last one's outcome. */
const reads = (log: string) => log.match(/users file reload(?:ed)? \([^)]*\)(?: refused)?/g) ?? [];

/**
 * Puts `text` in place as users.yml in one rename (the daemon never reads half a file) and waits for the daemon to
 * read it; true when it took it, false when it refused it and kept the last good one.
 */
export async function replaceUsers(d: RunningDaemon, text: string): Promise<boolean> {
  const before = reads(d.log()).length;
  const temp = join(d.dir, 'users.yml.new');
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, join(d.dir, 'users.yml'));
  const last = await waitFor('the daemon to read users.yml', () => reads(d.log())[before], 10_000);
  return !last.endsWith('refused');
}

/** Logs `user` in on the form; the session cookie's value. */
export async function logIn(d: RunningDaemon, user: string, password: string): Promise<string> {
  const res = await fetch(`${d.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password }).toString(),
  });
  await res.arrayBuffer();
  const cookie = /watchdog_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (res.status !== 303 || !cookie) throw new Error(`login of ${user}: ${res.status}, no session cookie`);
  return cookie;
}

/**
 * One request with the path sent exactly as given (no client-side folding of `..` or `%2e`, unlike fetch), so the
 * daemon sees what an attacker's raw client would send; `from`: the loopback address it is sent from.
 */
export function rawRequest(
  d: RunningDaemon,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  from?: string,
): Promise<Answer> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const where = { host: url.hostname, port: url.port, method, path, headers, localAddress: from };
    const req = request(where, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** `GET /events` with `headers`: the events as they come (`seen`), until `close()`. */
export async function openEvents(
  d: RunningDaemon,
  headers: Record<string, string>,
): Promise<{ seen: SseEvent[]; close: () => void }> {
  const stop = new AbortController();
  const res = await fetch(`${d.url}/events`, { headers, signal: stop.signal });
  if (res.status !== 200 || !res.body) throw new Error(`/events answered ${res.status}`);
  const seen: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  void (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = /^data: ?(.*)$/m.exec(block)?.[1];
        if (event !== undefined && data !== undefined) seen.push({ event, data: JSON.parse(data) });
      }
    }
  })().catch(() => undefined);
  return { seen, close: () => stop.abort() };
}

/** The named cases' keys (made once per test process): whose, and the line that sets them apart. */
export const CASE_KEYS = {
  /** mo's, with unscoped Permissions: status.read, control.stop and files.read "everywhere". */
  wide: { ...newApiKey(), user: 'mo', extra: 'Permissions: [status.read, control.stop, files.read]' },
  /** boss's (admin everywhere), with files.read@a only. */
  filesOfA: { ...newApiKey(), user: 'boss', extra: 'Permissions: [files.read@a]' },
  expired: { ...newApiKey(), user: 'boss', extra: 'Expires: "2020-01-01T00:00:00Z"' },
  live: { ...newApiKey(), user: 'boss', extra: 'Expires: "2099-01-01T00:00:00Z"' },
};

/**
 * The named cases' users file: fr holds files.read on a (a role of its own), mo moderator on a, v3 viewer on each
 * instance one by one (never `*`), boss admin everywhere; and CASE_KEYS.
 */
export function caseUsers(hash: string): string {
  return [
    'Roles:',
    '  reader: [files.read]',
    'Users:',
    ...[
      ['fr', '[reader@a]'],
      ['mo', '[moderator@a]'],
      ['v3', '[viewer@a, viewer@b, viewer@c]'],
      ['boss', '[admin]'],
    ].flatMap(([name, roles]) => [`  ${name}:`, `    Password: "${hash}"`, `    Roles: ${roles}`]),
    'Keys:',
    ...Object.values(CASE_KEYS).flatMap((k) => [
      `  ${k.id}:`,
      `    User: ${k.user}`,
      `    Hash: "${k.hash}"`,
      `    ${k.extra}`,
    ]),
    '',
  ].join('\n');
}
