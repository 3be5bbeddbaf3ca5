/**
 * The game-server kit as a package entry (`game-server-watchdog/kit`, also the package root): what a Node game
 * server imports to speak the watchdog's and the launcher's HTTP API. The probe, which a launcher-side tool
 * needs rather than a server, is `game-server-watchdog/kit/probe`.
 */
export {
  AgonesSdk,
  AgonesSdkError,
  agonesPortFrom,
  DEFAULT_AGONES_HTTP_PORT,
  type AgonesSdkOptions,
  type CallOptions,
} from './agones.ts';
export {
  agonesOptionsFrom,
  DEFAULT_AGONES_HEALTH_SECONDS,
  startAgonesMode,
  type AgonesMode,
  type AgonesModeOptions,
} from './agones-mode.ts';
export { PLAYERS_KEY } from './agones-players.ts';
export { DEFAULT_RETRY, NO_RETRY, type RetryPolicy } from './agones-retry.ts';
export type { WatchOptions } from './agones-watch.ts';
export {
  GAME_SERVER_STATES,
  type Counter,
  type CounterUpdate,
  type GameServer,
  type GameServerState,
} from './agones-wire.ts';
export { createGameApi, sameSecret, UPDATE_REASONS, type GameApiOptions } from './api.ts';
export type { ShutdownRequest, UpdateReason, UpdateRequest } from './api.ts';
export {
  checkinOptionsFrom,
  checkinUrl,
  DEFAULT_CHECKIN_SECONDS,
  startCheckins,
  type CheckinOptions,
  type CheckinResult,
  type Checkins,
} from './checkin.ts';
export {
  loadSettings,
  parseArgs,
  Settings,
  SettingsError,
  type CvarAssignment,
  type CvarDefault,
  type CvarOrigin,
  type LoadSettingsOptions,
} from './settings.ts';
export {
  AUTH_MODES,
  InfoSchema,
  LINK_ICONS,
  StatusSchema,
  validateInfo,
  validateStatus,
  type AuthMode,
  type Build,
  type Info,
  type Link,
  type LinkIcon,
  type PrivacyPolicy,
  type Problem,
  type Status,
  type Validated,
} from './schemas.ts';
export { inferTags, languageName, NO_TAG_INFER, RP_LEVELS, validateTags, type TagProblem } from './tags.ts';
export { isRegionCode, REGIONS, regionName, regionsOf, type RegionCode, type RegionTag } from './regions.ts';
// createGameApi returns a Hono app; re-exporting the Node adapter's serve() spares a game server a second
// dependency (and a version of it that might not match the kit's Hono).
export { serve } from '@hono/node-server';
