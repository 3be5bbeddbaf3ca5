import { addApiKey, readForEdit, writeUsers } from '../../auth/users-edit.ts';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import type { Command, CommandOptions } from '../registry.ts';
import { usersFileOf } from './users.ts';

export const usage = `usage: watchdog key create --user NAME [--permission P[@INSTANCE]]… [--expires-days N] [--config F]
       watchdog key list [--config F]
       watchdog key revoke <id> [--config F]
  API keys for scripts and bots, sent as \`Authorization: Bearer <key>\`. A key holds the permissions given (all
  of its user's without --permission), and never more than its user holds at the time of each request; it is
  printed once by create and stored hashed. Edits the users file on this host; the daemon reloads it.
  --user NAME          the user the key acts for
  --permission P[@I]   a permission, on instance I or on all (repeatable)
  --expires-days N     refused N days from now (default: never)
  --config FILE        the main configuration file (default: ./appsettings.yml)`;

export const options = {
  user: { type: 'string' },
  permission: { type: 'string', multiple: true },
  'expires-days': { type: 'string' },
  config: { type: 'string' },
} as const satisfies CommandOptions;

/** `watchdog key create|list|revoke`. */
export const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const [verb, id] = positionals;
  const wanted = verb === 'revoke' ? 2 : 1;
  if (positionals.length > wanted) throw new UsageError(`unexpected argument "${positionals[wanted]}"\n${usage}`);
  if (verb === 'revoke' && id === undefined) throw new UsageError(`name the key to revoke (its id)\n${usage}`);
  const file = await usersFileOf(values.config);
  const doc = await readForEdit(file);
  doc.Keys ??= {};
  const keys = doc.Keys;
  switch (verb) {
    case 'create': {
      const user = values.user;
      if (user === undefined) throw new UsageError(`name the key's user with --user\n${usage}`);
      if (!doc.Users?.[user]) throw new ClientError(`no user ${user} in ${file}; add one with \`watchdog user add\``);
      const days = values['expires-days'] === undefined ? undefined : Number(values['expires-days']);
      if (days !== undefined && !(Number.isFinite(days) && days > 0))
        throw new UsageError(`--expires-days takes a number of days above 0, not "${values['expires-days']}"`);
      const made = addApiKey(doc, user, { permissions: values.permission, days });
      await writeUsers(file, doc);
      process.stderr.write(`created key ${made.id} for ${user} in ${file}; it is shown this once:\n`);
      process.stdout.write(`${made.key}\n`);
      return 0;
    }
    case 'list': {
      const entries = Object.entries(keys);
      if (entries.length === 0) process.stdout.write('no keys\n');
      const now = Date.now();
      for (const [kid, k] of entries) {
        const expired = k.Expires !== undefined && Date.parse(k.Expires) <= now ? ' (expired)' : '';
        const rights = k.Permissions?.join(', ') ?? `(all of ${k.User}'s)`;
        process.stdout.write(
          `${kid}\tuser: ${k.User}\tpermissions: ${rights}\texpires: ${k.Expires ?? 'never'}${expired}\n`,
        );
      }
      return 0;
    }
    case 'revoke': {
      if (id === undefined || !keys[id]) throw new ClientError(`no key ${id} in ${file}`);
      delete keys[id];
      await writeUsers(file, doc);
      process.stdout.write(`revoked key ${id} in ${file}\n`);
      return 0;
    }
    default:
      throw new UsageError(`${verb === undefined ? 'say what to do' : `unknown action "${verb}"`}\n${usage}`);
  }
};
