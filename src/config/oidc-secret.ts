import { readSecretFile } from './checks.ts';
import { isMap, type ReportProblem } from './merge.ts';

/**
 * The client secret `Users.Oidc.ClientSecretFile` holds (one trailing newline trimmed), read at load like the other
 * secret files; undefined without Oidc or without the key. A file that cannot be read is a problem naming the key.
 */
export async function readOidcSecret(
  raw: Record<string, unknown>,
  cwd: string,
  problem: ReportProblem,
): Promise<string | undefined> {
  const oidc = isMap(raw.Users) && isMap(raw.Users.Oidc) ? raw.Users.Oidc : undefined;
  const file = oidc?.ClientSecretFile;
  if (typeof file !== 'string' || file === '') return undefined;
  const r = await readSecretFile(file, cwd);
  if (r.ok) return r.value;
  problem(
    ['Users', 'Oidc', 'ClientSecretFile'],
    `expected a readable file holding the client secret (${r.reason})`,
    file,
  );
  return undefined;
}
