import { createTarget, type Target } from '../client/target.ts';
import type { CommandOptions } from '../registry.ts';

/** The flags of every command that talks to a daemon: where it is and the instance's token. */
export const TARGET_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
} as const satisfies CommandOptions;

/** The usage lines of TARGET_FLAGS. */
export const TARGET_USAGE = `  --url URL     the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml, else http://localhost:5000)
  --token T     the instance's ApiToken, or an API key (default: WATCHDOG_TOKEN, else the local appsettings.yml)
  --config F    the appsettings.yml to read the address and token from`;

/** The daemon's Admin credentials, for commands that may act on every instance. */
export const ADMIN_FLAGS = {
  user: { type: 'string' },
  password: { type: 'string' },
} as const satisfies CommandOptions;

interface TargetFlagValues {
  url?: string;
  token?: string;
  config?: string;
  user?: string;
  password?: string;
}

/** A stderr note that does not stop the command. */
export const warnTo = (command: string) => (message: string) => {
  process.stderr.write(`watchdog ${command}: ${message}\n`);
};

/** The daemon `command`'s flags name, seen from this process's folder and environment. */
export function targetOf(command: string, values: TargetFlagValues): Target {
  return createTarget({
    url: values.url,
    token: values.token,
    user: values.user,
    password: values.password,
    configFile: values.config,
    cwd: process.cwd(),
    env: process.env,
    warn: warnTo(command),
  });
}
