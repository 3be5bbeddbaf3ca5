import { UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import { basic, request } from '../client/http.ts';
import { keepLogin } from '../client/logins.ts';
import { readPassword } from '../client/secret-input.ts';
import type { Command, CommandOptions } from '../registry.ts';
import { TARGET_FLAGS, targetOf } from './target-flags.ts';

export const usage = `usage: watchdog login --user NAME [--password-stdin] [--url URL] [--config F]
       watchdog login --forget [--url URL] [--config F]
  Checks a user of the daemon's users file against the daemon, then keeps the login for its address in
  ~/.config/watchdog/logins.json (XDG_CONFIG_HOME), readable by you alone: commands that talk to that daemon then
  send it where no --token or WATCHDOG_TOKEN is given, and status lists what the user may read.
  --user NAME         the user (watchdog user add)
  --password-stdin    read the password from stdin (never give it as an argument), else asked on the terminal
  --forget            forget the login kept for the address
  --url URL           the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml)
  --config F          the appsettings.yml to read the address from`;

export const options = {
  user: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  forget: { type: 'boolean' },
  url: TARGET_FLAGS.url,
  config: TARGET_FLAGS.config,
} as const satisfies CommandOptions;

/** What `GET /api/me` answers, as far as a login needs it. */
interface Me {
  user: string | null;
  accounts: boolean;
}

/** `watchdog login`: checks the credentials with `GET /api/me` before keeping them, so a typo is never kept. */
export const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"\n${usage}`);
  const url = await targetOf('login', values).url();
  if (values.forget) {
    const file = await keepLogin(url, undefined, process.env);
    process.stdout.write(`forgot the login for ${url} (${file})\n`);
    return 0;
  }
  const username = values.user;
  if (!username) throw new UsageError(`name the user with --user\n${usage}`);
  const password = await readPassword(values['password-stdin'] === true, usage);
  const me = await request<Me>(`${url}/api/me`, { url, key: 'the login' }, 'the login', {
    authorization: basic(username, password),
    as: 'admin',
  });
  if (!me.accounts || me.user !== username) {
    process.stderr.write(
      `watchdog login: the watchdog at ${url} has no users file (users.yml), so there is no one to log in as; use --token, or --user and --password for its Admin\n`,
    );
    return 1;
  }
  const file = await keepLogin(url, { username, password }, process.env);
  process.stdout.write(`logged in to ${url} as ${username} (kept in ${file})\n`);
  return 0;
};
