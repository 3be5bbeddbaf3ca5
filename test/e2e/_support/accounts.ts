import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testConfig } from '../../_support/config.ts';
import type { RunningDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';

export const TOKENS = { a: 'token-of-a-0123456789', b: 'token-of-b-0123456789' } as const;

const NO_PROGRAM = '/nonexistent/watchdog-test-server';
/** The console route answers 403 of its own while the console is off: on, so every 403 is a missing right. */
const CONSOLE_ON = '      Console: true';

/**
 * Two instances, a and b, whose program does not exist: they stay stopped, so a request a right lets through does
 * nothing slow (a restart or stop finds no server), and the test is about who gets in, not what the server does.
 * `more`: further top-level settings (YAML) for the main file; `webhook`: the chat webhook's address.
 */
export async function accountsConfig(more = '', webhook?: string): Promise<string> {
  const [pa, pb] = [await freePort(), await freePort()];
  return testConfig({
    ...(webhook === undefined ? {} : { webhook }),
    // With no Admin, a loopback client may read any log (the dashboard's rule): an Admin makes the log row's
    // answers the accounts' own.
    extra: `Admin:\n  Username: root\n  Password: admin-password-0123456789${more === '' ? '' : `\n${more}`}`,
    instances: [
      { key: 'a', token: TOKENS.a, port: pa, runCommand: NO_PROGRAM, extra: CONSOLE_ON },
      // Dummy: an update a user asks for on b is found at once (its notice names them).
      { key: 'b', token: TOKENS.b, port: pb, runCommand: NO_PROGRAM, extra: `${CONSOLE_ON}\n      UpdateType: Dummy` },
    ],
  });
}

/** How many times the daemon has read its users file since it started (applied, refused or kept). */
const readsIn = (log: string) => (log.match(/users file reload|the users file .* is gone/g) ?? []).length;

/** Writes users.yml beside the daemon's appsettings.yml and waits until the daemon has read it. */
export async function writeUsers(d: RunningDaemon, text: string): Promise<void> {
  const before = readsIn(d.log());
  await writeFile(join(d.dir, 'users.yml'), text, { mode: 0o600 });
  await waitFor('the daemon to read users.yml', () => readsIn(d.log()) > before, 10_000);
}

/** Waits for the daemon's next read of its users file after `action` (removing it, say). */
export async function afterUsersRead(d: RunningDaemon, action: () => Promise<unknown>): Promise<void> {
  const before = readsIn(d.log());
  await action();
  await waitFor('the daemon to read users.yml', () => readsIn(d.log()) > before, 10_000);
}

export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

export interface Answer {
  status: number;
  body: string;
}

/** One request to the daemon; `json`, when given, is sent as its JSON body. */
export async function send(
  d: RunningDaemon,
  method: string,
  path: string,
  authorization?: string,
  json?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  if (json !== undefined) headers['content-type'] = 'application/json';
  const body = json === undefined ? undefined : JSON.stringify(json);
  const res = await fetch(`${d.url}${path}`, { method, headers, body });
  return { status: res.status, body: await res.text() };
}

/** Waits until both instances are registered: the daemon listens before it has made them (503 meanwhile). */
export async function instancesUp(d: RunningDaemon): Promise<void> {
  for (const key of ['a', 'b'] as const)
    await waitFor(`instance ${key} to be registered`, async () => {
      const res = await send(d, 'GET', `/instances/${key}/status`, basicAuth(key, TOKENS[key]));
      return res.status === 200;
    });
}
