import { apiKeyId } from '../../auth/api-keys.ts';
import { TOTP_BASIC_REFUSED } from '../../auth/totp.ts';
import { UsageError } from '../../errors.ts';
import type { LoginKey } from '../../http/schemas.ts';
import { parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { basic, refusal, request } from '../client/http.ts';
import { keepLogin } from '../client/logins.ts';
import { readLine, readPassword } from '../client/secret-input.ts';
import { TARGET_FLAGS, targetOf } from '../client/target.ts';
import type { Command, CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog login [--url URL] [--user NAME] [--password-stdin] [--code CODE] [--config F]
       watchdog login --forget [--url URL] [--config F]
  Logs a user of the daemon's users file in, and keeps an API key the daemon makes for it (the user's rights, for
  30 days; never the password) for the daemon's address in ~/.config/watchdog/logins.json (XDG_CONFIG_HOME), readable
  by you alone: commands that talk to that daemon send it where no --token or WATCHDOG_TOKEN is given, and status
  lists what the user may read. Log in again when it runs out.
  --user NAME         the user (default: WATCHDOG_USER, else asked on the terminal)
  --password-stdin    read the password from stdin (never give it as an argument), else asked on the terminal
  --code CODE         the one-time code of a user with TOTP, else asked on the terminal when the user has one
  --forget            forget the login kept for the address
  --url URL           the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml)
  --config F          the appsettings.yml to read the address from`;

export const options = {
  user: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  code: { type: 'string' },
  forget: { type: 'boolean' },
  url: TARGET_FLAGS.url,
  config: TARGET_FLAGS.config,
} as const satisfies CommandOptions;

/**
 * A key for `user`, asked with the password; a user with a one-time code is refused that (Basic carries no code), so
 * it logs in on the dashboard's form with its code, and the session that gives asks for the key, then ends.
 */
async function makeKey(url: string, user: string, password: string, code: () => Promise<string>): Promise<LoginKey> {
  const ep = { url, key: user };
  const asked = (headers: { authorization?: string; cookie?: string }) =>
    request<LoginKey>(`${url}/api/me/keys`, ep, 'login', { method: 'POST', ...headers, as: 'admin' });
  try {
    return await asked({ authorization: basic(user, password) });
  } catch (err) {
    if (refusal(err).said !== TOTP_BASIC_REFUSED) throw noKey(err, url);
  }
  const cookie = await formLogin(url, user, password, await code());
  try {
    return await asked({ cookie }).catch((err: unknown) => Promise.reject(noKey(err, url)));
  } finally {
    await fetch(`${url}/logout`, { method: 'POST', headers: { cookie }, redirect: 'manual' }).catch(() => undefined);
  }
}

/** A 403 says why in the daemon's own words (the Admin login, or no users file: no user to give a key to). */
function noKey(err: unknown, url: string): unknown {
  const { status, said } = refusal(err);
  if (status !== 403) return err;
  const why = typeof said === 'string' ? said : 'no reason given';
  return new ClientError(`403: the watchdog at ${url} made no key: ${why}`, 1, { cause: err });
}

/** `POST /login` as the dashboard's form does; the session cookie it sets, as a Cookie header. */
async function formLogin(url: string, user: string, password: string, code: string): Promise<string> {
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password, code }).toString(),
  });
  await res.arrayBuffer();
  const cookie = /^[^=;\s]+=[^;]*/.exec(res.headers.get('set-cookie') ?? '')?.[0];
  if (res.status === 303 && cookie) return cookie;
  const why =
    res.status === 401
      ? 'wrong user name, password or one-time code'
      : res.status === 429
        ? `too many attempts; try again in ${res.headers.get('retry-after') ?? 'a while'} s`
        : `it answered ${res.status}`;
  throw new ClientError(`the watchdog at ${url} refused the login of ${user}: ${why}`);
}

/** `watchdog login`: the user name from --user, WATCHDOG_USER or the terminal; then the password, and a code if asked. */
export const run: Command = async (args) => {
  const { values } = parseCommandArgs(args, options, usage, 0);
  const url = await targetOf('login', values).url();
  if (values.forget) {
    const { file, was } = await keepLogin(url, undefined, process.env);
    process.stdout.write(`forgot the login for ${url} (${file})\n`);
    const id = was?.key === undefined ? undefined : apiKeyId(was.key);
    if (id !== undefined)
      process.stdout.write(
        `its key ${id} holds until ${was?.expires ?? 'it expires'}: \`watchdog key revoke ${id}\` on the daemon's host ends it now\n`,
      );
    return 0;
  }
  const user =
    values.user || process.env.WATCHDOG_USER || (await readLine('user: ', '--user or WATCHDOG_USER', usage, true));
  if (!user) throw new UsageError(`name the user with --user or WATCHDOG_USER\n${usage}`);
  const password = await readPassword(values['password-stdin'] === true, usage);
  const code = async () => values.code ?? (await readLine('one-time code: ', '--code', usage));
  const made = await makeKey(url, user, password, code);
  const { file } = await keepLogin(url, { user, key: made.key, expires: made.expires }, process.env);
  process.stdout.write(`logged in to ${url} as ${user} until ${made.expires} (key ${made.id}, kept in ${file})\n`);
  return 0;
};
