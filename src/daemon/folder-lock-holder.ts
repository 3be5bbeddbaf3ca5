import { createConnection } from 'node:net';

/** What the watchdog holding a folder says about itself when asked. */
export interface LockHolder {
  pid: number | null;
  /** Where it listens; empty while it is still starting, and for `watchdog import`. */
  urls: string[];
  /** `start` (the daemon) or `import`. */
  command: string;
}

/** Another watchdog holds the folder: nothing was touched, and the message says who, where and what to do. */
export class FolderLockedError extends Error {
  override name = 'FolderLockedError';
  constructor(
    readonly folder: string,
    readonly holder: LockHolder,
    options?: ErrorOptions,
  ) {
    super(describeHolder(folder, holder), options);
  }
}

/** `another watchdog (pid N, listening on http://…) is running in <folder>`, and the variants of that. */
export function describeHolder(folder: string, h: LockHolder): string {
  const who = h.pid === null ? 'pid unknown: it did not answer' : `pid ${h.pid}`;
  const doing =
    h.command === 'import'
      ? 'running `watchdog import`'
      : h.urls.length > 0
        ? `listening on ${h.urls.join(' and ')}`
        : 'still starting';
  return (
    `another watchdog (${who}, ${doing}) is running in ${folder}; ` +
    'stop it first, or give this one another working folder and Servers.InstanceRoot'
  );
}

/** The holder's answer; `gone` when nobody holds the name any more (it ended a moment ago). */
export function askHolder(name: string, timeoutMs: number): Promise<LockHolder | 'gone'> {
  return new Promise((resolve) => {
    let text = '';
    const unknown: LockHolder = { pid: null, urls: [], command: 'start' };
    const sock = createConnection({ path: name });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(unknown);
    }, timeoutMs);
    const finish = (result: LockHolder | 'gone') => {
      clearTimeout(timer);
      sock.destroy();
      resolve(result);
    };
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
      if (text.length > 4096) finish(unknown);
    });
    sock.on('end', () => finish(parseHolder(text) ?? unknown));
    sock.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? 'gone' : unknown),
    );
  });
}

function parseHolder(text: string): LockHolder | null {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const pid = typeof o.pid === 'number' && Number.isInteger(o.pid) ? o.pid : null;
    const urls = Array.isArray(o.urls)
      ? o.urls
          .filter((u): u is string => typeof u === 'string')
          .slice(0, 8)
          .map(printable)
      : [];
    const command = typeof o.command === 'string' ? printable(o.command) : 'start';
    return { pid, urls, command };
  } catch {
    return null;
  }
}

/** Anyone on the machine can answer on an abstract name: what it says is shown without control characters. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').slice(0, 200);
}
