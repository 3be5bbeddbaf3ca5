/**
 * The real engine server (RobustToolbox's Robust.Server with a placeholder content module) as a test oracle and
 * benchmark peer: where its bundle lives, whether it can run here, and one extraction per process.
 *
 * The bundle is `$ROBUST_ENGINE_BUNDLE`, else `<repo>/../shared/peers/robust-engine/robust-server-linux-x64.tar.xz`.
 * It needs the .NET 10 runtime (a framework-dependent apphost), the system's `libzstd.so.1` and `xz` to unpack.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The test runner imports a compiled copy of this module from elsewhere, and says where the repository is.
const ROOT = process.env.WATCHDOG_TEST_ROOT ?? fileURLToPath(new URL('../../../', import.meta.url));

export const ENGINE_BUNDLE =
  process.env.ROBUST_ENGINE_BUNDLE || resolve(ROOT, '..', 'shared/peers/robust-engine/robust-server-linux-x64.tar.xz');

/** The folder the archive unpacks to, and the program inside it (engine root = program/../../). */
export const BUNDLE_DIR = 'robust-server-linux-x64';
export const PROGRAM_IN_BUNDLE = 'RobustToolbox/bin/Server/Robust.Server';

/** The engine's check-in period: fixed at 15 s, counted from the previous ping (not configurable). */
export const ENGINE_CHECKIN_SECONDS = 15;

function run(program: string, args: string[]): string | null {
  try {
    return execFileSync(program, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 20_000 });
  } catch {
    return null;
  }
}

function whyUnavailable(): string | null {
  if (!existsSync(ENGINE_BUNDLE)) return `no engine bundle at ${ENGINE_BUNDLE}`;
  const runtimes = run('dotnet', ['--list-runtimes']);
  if (runtimes === null) return 'no dotnet on PATH (the engine needs the .NET 10 runtime)';
  if (!/^Microsoft\.NETCore\.App 10\./m.test(runtimes)) return 'no .NET 10 runtime (Microsoft.NETCore.App 10.x)';
  const libs = run('ldconfig', ['-p']) ?? run('/sbin/ldconfig', ['-p']) ?? '';
  if (!/libzstd\.so\.1\b/.test(libs)) return 'no libzstd.so.1 (Debian package libzstd1)';
  if (run('xz', ['--version']) === null) return 'no xz to unpack the bundle (Debian package xz-utils)';
  return null;
}

/** Why the real engine cannot run here, or null when it can. Computed once per process. */
export const ENGINE_SKIP: string | null = whyUnavailable();

export interface EngineBundle {
  /** The unpacked `robust-server-linux-x64` folder. */
  dir: string;
  /** Absolute path of `Robust.Server`: an instance's `RunCommand`. */
  program: string;
  /** Removes the unpacked folder. */
  cleanup(): Promise<void>;
}

let extracted: Promise<EngineBundle> | null = null;

/** Unpacks the bundle into a temporary folder once per process (~1 s); later calls share it. */
export function engineBundle(): Promise<EngineBundle> {
  extracted ??= (async () => {
    if (ENGINE_SKIP) throw new Error(`the real engine cannot run here: ${ENGINE_SKIP}`);
    const parent = await mkdtemp(join(tmpdir(), 'robust-engine-'));
    await new Promise<void>((ok, fail) =>
      execFile('tar', ['-xJf', ENGINE_BUNDLE, '-C', parent], { timeout: 120_000 }, (err, _out, stderr) =>
        err ? fail(new Error(`unpacking ${ENGINE_BUNDLE} failed: ${stderr || err.message}`, { cause: err })) : ok(),
      ),
    );
    const dir = join(parent, BUNDLE_DIR);
    return { dir, program: join(dir, PROGRAM_IN_BUNDLE), cleanup: () => rm(parent, { recursive: true, force: true }) };
  })();
  return extracted;
}

export interface EngineConfig {
  /** The status API's TCP port: the instance's `ApiPort`. */
  statusPort: number;
  /** The UDP game port (`net.port`); must be free too. */
  gamePort: number;
  hostname?: string;
  /** `build.version` echoed by `/info`. */
  version?: string;
}

/**
 * An instance's `config.toml` for the engine. `status.bind` must be set (else it listens on every interface, on
 * net.port), `build.download_url` must not be empty (else `/info` aborts the engine), and the engine's own log
 * files stay off (relative log paths land inside the bundle); its log still goes to stdout.
 */
export function engineConfigToml(c: EngineConfig): string {
  return `[net]
port = ${c.gamePort}
bindto = "127.0.0.1"

[status]
enabled = true
bind = "127.0.0.1:${c.statusPort}"

[auth]
mode = 0

[game]
hostname = "${c.hostname ?? 'robust-oracle'}"

[log]
enabled = false
runtimelog = false

[build]
fork_id = "engine-test"
version = "${c.version ?? '0.0.1'}"
download_url = "http://127.0.0.1:${c.statusPort}/client.zip"
hash = "${'0'.repeat(64)}"
engine_version = "289.0.0"
`;
}
