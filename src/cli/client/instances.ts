import { ClientError } from './errors.ts';

/** What every command says of a key the daemon (or the local config) does not have. */
function unknownInstanceMessage(key: string, known: readonly string[] | undefined): string {
  const list =
    known === undefined
      ? "unknown here: Admin credentials or the daemon's appsettings.yml list them"
      : known.length > 0
        ? known.join(', ')
        : 'none';
  return `no instance "${key}" (instances: ${list})`;
}

/**
 * An instance key nobody configured. `known` is the list to show, when one was found: from the daemon
 * (`GET /api/instances`, or its 404 to an admin) or from the local config. Exit 1, as any refusal.
 */
export class UnknownInstanceError extends ClientError {
  override name = 'UnknownInstanceError';
  constructor(
    readonly key: string,
    readonly known: readonly string[] | undefined,
    options?: ErrorOptions,
  ) {
    super(unknownInstanceMessage(key, known), 1, options);
  }
}
