import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The portable part of .NET's RID graph (`runtime.json`): each RID and the RIDs it imports, walked breadth-first to
 * pick a server archive, as the real watchdog's `RidUtility.cs` does.
 */
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

/**
 * What tells a Linux host's C library apart, each item where it can be read: `process.report`'s glibc version and
 * loaded libraries, musl's loaders in `/lib`, `ID` of `/etc/os-release`.
 */
export interface LibcEvidence {
  glibcVersionRuntime?: string;
  sharedObjects?: string[];
  muslLoaders?: string[];
  osReleaseId?: string;
}

const MUSL_LIBRARY = /(^|\/)(ld-musl-|libc\.musl-)/;

/**
 * Whether a Linux host runs on musl, as .NET tells `linux-musl-*` apart: by this process's own C library when it
 * says; only otherwise by musl's loader in /lib (a glibc system may carry one) or an Alpine os-release.
 */
export function isMusl(evidence: LibcEvidence): boolean {
  if (evidence.glibcVersionRuntime) return false;
  if (evidence.sharedObjects?.some((lib) => MUSL_LIBRARY.test(lib))) return true;
  if (evidence.muslLoaders?.length) return true;
  return evidence.osReleaseId === 'alpine';
}

/** This host's LibcEvidence; for tests, the files under `root`, and `report: false` leaves this process out. */
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
    } catch {}
  }
  try {
    evidence.muslLoaders = readdirSync(join(root, 'lib')).filter((name) => name.startsWith('ld-musl-'));
  } catch {}
  try {
    const id = /^ID=(.*)$/m.exec(readFileSync(join(root, 'etc', 'os-release'), 'utf8'))?.[1];
    evidence.osReleaseId = id?.trim().replace(/^["']|["']$/g, '');
  } catch {}
  return evidence;
}

let muslHere: boolean | undefined;
/** This process's host; the C library is looked up once, when first needed (a few milliseconds), only on Linux. */
export const THIS_HOST = {
  platform: process.platform,
  arch: process.arch as string,
  musl: () => (muslHere ??= isMusl(readLibcEvidence())),
};
export type Host = typeof THIS_HOST;

/** This host's RID as .NET reports it (`linux-musl-x64`, `win-x64`, …), or `override` (`Updates.Platform`). */
export function hostRid(override?: string, host: Host = THIS_HOST): string {
  if (override && override.trim() !== '') return override.trim();
  const os = OS_NAMES[host.platform] ?? host.platform;
  const arch = ARCH_NAMES[host.arch as NodeJS.Architecture] ?? host.arch;
  return host.platform === 'linux' && host.musl() ? `${os}-musl-${arch}` : `${os}-${arch}`;
}

/** The platform a Git checkout is packaged for: `<os>-<arch>`, as the engine's packaging knows no musl. */
export function hostPackagingRid(override?: string, host: Host = THIS_HOST): string {
  return hostRid(override, { ...host, musl: () => false });
}

/**
 * The RIDs whose builds run on `rid`, most specific first (`linux-x64` → linux-x64, linux, unix-x64, unix, any,
 * base); an unknown RID as is, then its operating system's chain.
 */
export function ridFallbacks(rid: string): string[] {
  const os = rid.split('-')[0] ?? '';
  const queue = RID_GRAPH[rid] ? [rid] : [rid, RID_GRAPH[os] ? os : 'any'];
  const order: string[] = [];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    if (order.includes(next)) continue;
    order.push(next);
    queue.push(...(RID_GRAPH[next] ?? []));
  }
  return order;
}

export function pickPlatform(available: string[], rid: string): string | undefined {
  return ridFallbacks(rid).find((candidate) => available.includes(candidate));
}
