import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UpdateError } from '../../errors.ts';

/**
 * `Updates.BaseUrl`: a URL, an scp-like `user@host:path`, or a local path (`url` then `file://…`, so `--depth` works).
 * An http(s) URL's credentials never reach argv or `.git/config`: `env` gives them as that origin's
 * `http.extraHeader` through `GIT_CONFIG_*` (git ≥ 2.31), so submodules elsewhere never see them.
 */
export interface GitRemote {
  url: string;
  display: string;
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

/** The fork id a non-hybrid build reports: `Updates.BaseUrl` (as the real watchdog) without credentials (it is public). */
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
 * The daemon's environment without `GIT_*` (GIT_DIR from a hook, say), prompts off, discovery stopped at the instance
 * folder (a broken `source/.git` is never mistaken for a repository around it).
 */
export function gitEnv(instanceDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_'))),
    GIT_TERMINAL_PROMPT: '0',
    GIT_CEILING_DIRECTORIES: instanceDir,
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
