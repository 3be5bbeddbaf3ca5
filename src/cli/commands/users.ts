import { hashPassword } from '../../auth/password.ts';
import { newTotpSecret, otpauthUri } from '../../auth/totp.ts';
import { checkedText, readForEdit, writeUsers } from '../../auth/users-edit.ts';
import { NAME } from '../../auth/users-file.ts';
import { loadConfig } from '../../config/load.ts';
import { ConfigError, UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { readNewPassword } from '../client/secret-input.ts';
import type { Command, CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog user add <name> [--role R[@INSTANCE]]… [--password-stdin] [--config F]
       watchdog user passwd <name> [--password-stdin] [--config F]
       watchdog user remove <name> [--config F]
       watchdog user totp <name> [--disable] [--config F]
       watchdog user list [--config F]
  Edits the users file (users.yml beside appsettings.yml, or Users.File) on this host; the daemon reloads it.
  A role without @INSTANCE holds on every instance. Roles: viewer, moderator, operator, admin, or one of the
  file's Roles. The password is read from stdin with --password-stdin, else asked for twice on the terminal.
  remove also revokes the user's keys. totp gives the user a new one-time-code secret (TOTP), printed once with its
  otpauth:// URI for an authenticator app; the dashboard login then asks for a code, and Basic with the password
  alone is refused (use an API key). --disable removes it.
  --role R[@I]        a role, on instance I or on all (repeatable)
  --password-stdin    read the password from stdin (never give it as an argument)
  --disable           totp: remove the user's one-time-code secret
  --config FILE       the main configuration file (default: ./appsettings.yml)`;

export const options = {
  role: { type: 'string', multiple: true },
  'password-stdin': { type: 'boolean' },
  disable: { type: 'boolean' },
  config: { type: 'string' },
} as const satisfies CommandOptions;

/** The users file the configuration names (`Users.File`, or users.yml beside the main file). */
export async function usersFileOf(config: string | undefined): Promise<string> {
  const loaded = await loadConfig({ file: config, cwd: process.cwd(), env: process.env });
  if (!loaded.ok) throw new ConfigError(loaded.problems);
  return loaded.config.usersFile;
}

function nameArg(positionals: string[]): string {
  const [, name, extra] = positionals;
  if (name === undefined) throw new UsageError(`name the user\n${usage}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"\n${usage}`);
  if (!NAME.test(name))
    throw new UsageError(`"${name}" is not a user name: letters, digits, "_", ".", "@" and "-", at most 64`);
  return name;
}

/** `watchdog user add|passwd|remove|list|totp`. */
export const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const verb = positionals[0];
  const file = await usersFileOf(values.config);
  const doc = await readForEdit(file);
  doc.Users ??= {};
  const users = doc.Users;
  const written = async (message: string) => {
    await writeUsers(file, doc);
    process.stdout.write(`${message}\n`);
    return 0;
  };
  if (verb === 'list') {
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"\n${usage}`);
    if (Object.keys(users).length === 0) process.stdout.write('no users\n');
    const keys = Object.values(doc.Keys ?? {});
    for (const [name, u] of Object.entries(users)) {
      const owned = keys.filter((k) => k.User === name).length;
      const totp = u.Totp === undefined ? '' : '\ttotp: on';
      process.stdout.write(`${name}\troles: ${(u.Roles ?? []).join(', ') || '(none)'}\tkeys: ${owned}${totp}\n`);
    }
    return 0;
  }
  if (verb !== 'add' && verb !== 'passwd' && verb !== 'remove' && verb !== 'totp')
    throw new UsageError(`${verb === undefined ? 'say what to do' : `unknown action "${verb}"`}\n${usage}`);
  const name = nameArg(positionals);
  const entry = users[name];
  if (verb === 'add') {
    if (entry) throw new ClientError(`${name} exists already in ${file}; \`watchdog user passwd\` sets its password`);
    // The roles are checked before the password is asked for, with a stand-in hash of nothing.
    users[name] = { Password: await hashPassword('', { N: 1024, r: 1, p: 1 }), Roles: values.role ?? [] };
    checkedText(file, doc);
    users[name].Password = await hashPassword(await readNewPassword(values['password-stdin'] === true, usage));
    return written(`added ${name} to ${file}`);
  }
  if (!entry) throw new ClientError(`no user ${name} in ${file}`);
  if (verb === 'passwd') {
    entry.Password = await hashPassword(await readNewPassword(values['password-stdin'] === true, usage));
    return written(`set the password of ${name} in ${file}`);
  }
  if (verb === 'remove') {
    delete users[name];
    const revoked = Object.entries(doc.Keys ?? {}).filter(([, k]) => k.User === name);
    for (const [id] of revoked) delete doc.Keys?.[id];
    return written(`removed ${name} from ${file}${revoked.length ? ` and revoked ${revoked.length} key(s)` : ''}`);
  }
  if (values.disable === true) {
    if (entry.Totp === undefined) throw new ClientError(`${name} has no one-time code in ${file}`);
    delete entry.Totp;
    return written(`removed the one-time code of ${name} in ${file}`);
  }
  entry.Totp = newTotpSecret();
  await writeUsers(file, doc);
  // The secret goes to stdout only, once (the URI on the first line, for a QR encoder); the note to stderr.
  process.stderr.write(
    `set a new one-time-code secret for ${name} in ${file}; add it to an authenticator app now, it is shown this once:\n`,
  );
  process.stdout.write(`${otpauthUri(name, entry.Totp)}\nsecret: ${entry.Totp}\n`);
  return 0;
};
