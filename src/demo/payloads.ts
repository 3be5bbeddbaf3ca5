import { generateKeyPairSync } from 'node:crypto';
import type { Info, Status } from '../kit/schemas.ts';
import type { DemoConfig } from './config.ts';
import type { Round } from './rounds.ts';

/**
 * The server's public key for `auth.public_key`: a fresh X25519 key (the curve of the sealed-box scheme launchers use
 * it with) in standard base64. The demo authenticates nobody; the key is there so launchers see a real one.
 */
export function makePublicKey(): string {
  const { publicKey } = generateKeyPairSync('x25519');
  const x = publicKey.export({ format: 'jwk' }).x ?? '';
  return Buffer.from(x, 'base64url').toString('base64');
}

/** `/status`: the engine's fields plus what a round-based game adds (as space-station-14's `GameTicker.StatusShell.cs`). */
export function statusOf(config: DemoConfig, players: number, round: Round): Status {
  return {
    name: config.hostname,
    players,
    soft_max_players: config.softMaxPlayers,
    tags: config.tags,
    round_id: round.id,
    run_level: 1, // in round: rounds follow each other with no lobby
    round_start_time: round.startedAt.toISOString(),
  };
}

const orNull = (s: string) => (s === '' ? null : s);

/** `/info` in the engine's shape (`StatusHost.Handlers.cs`); `privacy_policy` only when all three of its cvars are set. */
export function infoOf(config: DemoConfig, publicKey: string): Info {
  const b = config.build;
  return {
    connect_address: config.connectAddress,
    auth: { mode: config.authMode, public_key: publicKey },
    build: {
      engine_version: b.engineVersion,
      fork_id: b.forkId,
      version: b.version,
      download_url: b.downloadUrl,
      hash: orNull(b.hash),
      acz: false,
      manifest_download_url: orNull(b.manifestDownloadUrl),
      manifest_url: orNull(b.manifestUrl),
      manifest_hash: orNull(b.manifestHash),
    },
    desc: config.desc,
    links: config.links,
    ...(config.privacyPolicy ? { privacy_policy: config.privacyPolicy } : {}),
  };
}
