import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UpdateError } from '../../errors.ts';

/**
 * Where the Git provider fetches from (`Updates.BaseUrl`): an http(s)/ssh/git URL, an scp-like
 * `user@host:path`, or a local path (relative to the daemon's working directory). Credentials written into an
 * http(s) URL never reach git's arguments or `.git/config`: they are taken out of the URL and handed to git as an
 * `http.<origin>.extraHeader` through `GIT_CONFIG_*` environment variables (git ≥ 2.31), scoped to that origin so
 * submodules on other hosts never see them.
 */
export interface GitRemote {
  /** What git is given: the URL without credentials, or `file://…` for a local path (so `--depth` works). */
  url: string;
  /** For log lines and messages. */
  display: string;
  /** Extra environment for git commands that talk to the remote. */
  env: Record<string, string>;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const SCP_LIKE = /^[^/:]+:/;

export function parseRemote(baseUrl: string | undefined, workDir = process.cwd()): GitRemote {
  const raw = baseUrl?.trim() ?? '';
  if (raw === '')
    throw new UpdateError('UpdateType Git needs Updates.BaseUrl: the URL or local path of the repository to build');
  if (raw.startsWith('-')) throw new UpdateError(`Updates.BaseUrl "${raw}" is not a repository URL or path`);

  if (SCHEME.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch (err) {
      throw new UpdateError(`Updates.BaseUrl is not a valid URL: ${raw.replace(/\/\/[^@/]*@/, '//')}`, { cause: err });
    }
    const env: Record<string, string> = {};
    if ((url.username || url.password) && /^https?:$/.test(url.protocol)) {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      const basic = Buffer.from(`${user}:${password}`).toString('base64');
      env.GIT_CONFIG_COUNT = '1';
      env.GIT_CONFIG_KEY_0 = `http.${url.protocol}//${url.host}/.extraHeader`;
      env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
      url.username = '';
      url.password = '';
    } else if (url.password) {
      throw new UpdateError(
        `Updates.BaseUrl: a password in a ${url.protocol} URL cannot be passed safely; use an SSH key or an https URL`,
      );
    }
    return { url: url.href, display: url.href, env };
  }
  if (SCP_LIKE.test(raw) && !isAbsolute(raw)) return { url: raw, display: raw, env: {} };

  const path = resolve(workDir, raw);
  return { url: pathToFileURL(path).href, display: path, env: {} };
}

/**
 * The fork id a non-hybrid build reports: `Updates.BaseUrl` as configured, as the real watchdog reports it, except
 * that a user name or password written into a URL is left out (the id is public: every launcher reads it).
 */
export function forkIdOf(baseUrl: string | undefined): string {
  const raw = baseUrl?.trim() ?? '';
  if (!SCHEME.test(raw) || !URL.canParse(raw)) return raw;
  const url = new URL(raw);
  if (!url.username && !url.password) return raw;
  url.username = '';
  url.password = '';
  return url.href;
}

/**
 * The environment for git and build commands: the daemon's, minus any `GIT_*` variable that would redirect git
 * (GIT_DIR from a hook, say), with prompts off and repository discovery stopped at the instance folder, so a
 * broken `source/.git` is never mistaken for a repository the instance folder happens to sit in.
 */
export function gitEnv(instanceDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CEILING_DIRECTORIES: instanceDir,
    // Never block on an SSH host-key or passphrase prompt: fail and say so instead.
    GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes',
    ...extra,
  };
}

/** Branch names end up in argv; refuse ones git would read as options or that are not ref names. */
export function checkBranch(branch: string): string {
  if (branch === '' || branch.startsWith('-') || /[\s~^:?*[\\\0]|\.\.|@\{/.test(branch)) {
    throw new UpdateError(`Updates.Branch "${branch}" is not a valid branch name`);
  }
  return branch;
}
