import { readFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, type as osType, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './env.ts';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  os: string;
  node: string;
  packages: Record<string, string>;
}

const PACKAGES = [
  'hono',
  '@hono/node-server',
  'xstate',
  'yaml',
  'valibot',
  'mitt',
  'ofetch',
  'tar',
  'yauzl',
  'tsx',
  'pm2',
  'autocannon',
];

async function installedVersion(name: string): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return '(not installed)';
  }
}

export async function machineInfo(): Promise<MachineInfo> {
  const packages: Record<string, string> = {};
  const own = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  packages[own.name] = own.version;
  for (const name of PACKAGES) packages[name] = await installedVersion(name);
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: totalmem() / 2 ** 30,
    freeMemoryGiB: freemem() / 2 ** 30,
    os: `${osType()} ${release()}`,
    node: process.version,
    packages,
  };
}

export const loadAverage = (): number[] => loadavg();
