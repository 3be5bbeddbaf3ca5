/**
 * Runtime identifiers (RIDs) and the fallback chain used to pick a server archive, as the real watchdog does with
 * .NET's `runtime.json` (REFERENCE.md §8.1): breadth-first over each RID's imports.
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

const OS_NAMES: Partial<Record<NodeJS.Platform, string>> = { linux: 'linux', darwin: 'osx', win32: 'win', freebsd: 'freebsd' };
const ARCH_NAMES: Partial<Record<NodeJS.Architecture, string>> = { x64: 'x64', arm64: 'arm64', ia32: 'x86', arm: 'arm' };

/** This host's RID (`linux-x64`, `osx-arm64`, `win-x64`, …), or `override` (`Updates.Platform`) when given. */
export function hostRid(override?: string): string {
  if (override && override.trim() !== '') return override.trim();
  const os = OS_NAMES[process.platform] ?? process.platform;
  const arch = ARCH_NAMES[process.arch] ?? process.arch;
  return `${os}-${arch}`;
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
