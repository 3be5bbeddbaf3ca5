import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runtime identifiers (RIDs) and the fallback chain used to pick a server archive, as the real watchdog does with
 * .NET's `runtime.json` (its `RidUtility.cs`): breadth-first over each RID's imports.
 */

/** The portable part of .NET's RID graph: each RID and the RIDs it imports, in order. */
const RID_GRAPH: Record<string, readonly string[]> = {
  base: [],
  any: ['base'],
  unix: ['any'],
  'unix-x64': ['unix'],
  'unix-x86': ['unix'],
  'unix-arm': ['unix'],
  'unix-arm64': ['unix'],
  linux: ['unix'],
  'linux-x64': ['linux', 'unix-x64'],
  'linux-x86': ['linux', 'unix-x86'],
  'linux-arm': ['linux', 'unix-arm'],
  'linux-arm64': ['linux', 'unix-arm64'],
  'linux-musl': ['linux'],
  'linux-musl-x64': ['linux-musl', 'linux-x64'],
  'linux-musl-arm64': ['linux-musl', 'linux-arm64'],
  osx: ['unix'],
  'osx-x64': ['osx', 'unix-x64'],
  'osx-arm64': ['osx', 'unix-arm64'],
  freebsd: ['unix'],
  'freebsd-x64': ['freebsd', 'unix-x64'],
  'freebsd-arm64': ['freebsd', 'unix-arm64'],
  win: ['any'],
  'win-x64': ['win'],
  'win-x86': ['win'],
  'win-arm64': ['win'],
};

/** Every RID the catalog knows, longest first (so `linux-musl-x64` is tried before `linux-x64` when matching names). */
export const KNOWN_RIDS: readonly string[] = Object.keys(RID_GRAPH).sort((a, b) => b.length - a.length);

const OS_NAMES: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'linux',
  darwin: 'osx',
  win32: 'win',
  freebsd: 'freebsd',
};
const ARCH_NAMES: Partial<Record<NodeJS.Architecture, string>> = {
  x64: 'x64',
  arm64: 'arm64',
  ia32: 'x86',
  arm: 'arm',
};

/** What tells a Linux host's C library apart; every item may be missing where it cannot be read. */
export interface LibcEvidence {
  /** `process.report`'s `header.glibcVersionRuntime`: set when this process runs on glibc. */
  glibcVersionRuntime?: string;
  /** `process.report`'s `sharedObjects`: the libraries loaded into this process. */
  sharedObjects?: string[];
  /** Names of musl's dynamic loaders in `/lib` (`ld-musl-x86_64.so.1`, …). */
  muslLoaders?: string[];
  /** `ID` from `/etc/os-release` (`alpine`, `debian`, …). */
  osReleaseId?: string;
}

const MUSL_LIBRARY = /(^|\/)(ld-musl-|libc\.musl-)/;

/**
 * Whether a Linux host runs on musl, the way .NET tells `linux-musl-*` from `linux-*`: by the C library the runtime
 * itself is linked against. This process's own libraries decide when they say (a glibc runtime, or musl's loader
 * loaded); only otherwise do musl's loader in /lib (a glibc system may carry one for other programs, which is why it
 * comes second) or an Alpine os-release decide.
 */
export function isMusl(evidence: LibcEvidence): boolean {
  if (evidence.glibcVersionRuntime) return false;
  if (evidence.sharedObjects?.some((lib) => MUSL_LIBRARY.test(lib))) return true;
  if (evidence.muslLoaders?.length) return true;
  return evidence.osReleaseId === 'alpine';
}

/**
 * Reads this host's LibcEvidence; anything unreadable is left out. `root` and `report` are for tests: the files are
 * looked for under `root`, and `report: false` leaves this process's own libraries out.
 */
export function readLibcEvidence(opts: { root?: string; report?: boolean } = {}): LibcEvidence {
  const root = opts.root ?? '/';
  const evidence: LibcEvidence = {};
  if (opts.report !== false) {
    try {
      const report = process.report?.getReport() as
        | { header?: { glibcVersionRuntime?: string }; sharedObjects?: string[] }
        | undefined;
      evidence.glibcVersionRuntime = report?.header?.glibcVersionRuntime;
      evidence.sharedObjects = report?.sharedObjects;
    } catch {
      // No report support: the files below decide.
    }
  }
  try {
    evidence.muslLoaders = readdirSync(join(root, 'lib')).filter((name) => name.startsWith('ld-musl-'));
  } catch {
    // No /lib.
  }
  try {
    const id = /^ID=(.*)$/m.exec(readFileSync(join(root, 'etc', 'os-release'), 'utf8'))?.[1];
    evidence.osReleaseId = id?.trim().replace(/^["']|["']$/g, '');
  } catch {
    // No os-release.
  }
  return evidence;
}

/** The host a platform key is worked out for; `musl` is asked only on Linux. */
export interface Host {
  platform: NodeJS.Platform;
  arch: string;
  musl: () => boolean;
}

let muslHere: boolean | undefined;
/** This process's host; the C library is looked up once, when first needed (it costs a few milliseconds). */
export const THIS_HOST: Host = {
  platform: process.platform,
  arch: process.arch,
  musl: () => (muslHere ??= isMusl(readLibcEvidence())),
};

/**
 * This host's RID as .NET reports it (`linux-x64`, `linux-musl-x64`, `osx-arm64`, `win-x64`, …), or `override`
 * (`Updates.Platform`) when given. Picks server archives from a manifest or a CI server, along `ridFallbacks`.
 */
export function hostRid(override?: string, host: Host = THIS_HOST): string {
  if (override && override.trim() !== '') return override.trim();
  const os = OS_NAMES[host.platform] ?? host.platform;
  const arch = ARCH_NAMES[host.arch as NodeJS.Architecture] ?? host.arch;
  return host.platform === 'linux' && host.musl() ? `${os}-musl-${arch}` : `${os}-${arch}`;
}

/**
 * The platform a Git checkout is packaged for: `<os>-<arch>` without the C library, as the real watchdog names it
 * (the engine's packaging knows no musl platforms), or `override` (`Updates.Platform`) when given.
 */
export function hostPackagingRid(override?: string, host: Host = THIS_HOST): string {
  if (override && override.trim() !== '') return override.trim();
  return hostRid(undefined, { ...host, musl: () => false });
}

/**
 * The RIDs whose builds run on `rid`, most specific first: `linux-x64` → linux-x64, linux, unix-x64, unix, any,
 * base. An RID the catalog does not know is tried as is, then through its operating system's chain.
 */
export function ridFallbacks(rid: string): string[] {
  const start = RID_GRAPH[rid] ? [rid] : [rid, ...unknownRidParents(rid)];
  const order: string[] = [];
  const queue = [...start];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    if (order.includes(next)) continue;
    order.push(next);
    queue.push(...(RID_GRAPH[next] ?? []));
  }
  return order;
}

function unknownRidParents(rid: string): string[] {
  const os = rid.split('-')[0] ?? '';
  return RID_GRAPH[os] ? [os] : ['any'];
}

/** The first of `rid`'s fallbacks that `available` offers (exact key match), or undefined. */
export function pickPlatform(available: string[], rid: string): string | undefined {
  return ridFallbacks(rid).find((candidate) => available.includes(candidate));
}
