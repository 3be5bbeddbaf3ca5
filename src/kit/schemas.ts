import * as v from 'valibot';
import { validateTags } from './tags.ts';

/*
 * The public API's Status and Info: what a real engine serves and the launcher reads, no less (loose objects, as
 * games add fields; `links` may be absent, an icon null).
 */

export const AUTH_MODES = ['Optional', 'Required', 'Disabled'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
/** The spec's icon names (`chat`, `codehost`) and the ones the launcher draws (`discord`, `github`, `telegram`, …). */
export const LINK_ICONS = ['chat', 'codehost', 'discord', 'forum', 'github', 'telegram', 'web', 'wiki'] as const;
export type LinkIcon = (typeof LINK_ICONS)[number];

const count = (what: string) =>
  v.pipe(
    v.number(`${what} must be a number`),
    v.integer(`${what} must be a whole number`),
    v.minValue(0, `${what} must not be negative`),
  );
const text = (what: string) => v.string(`${what} must be a string`);
const optionalText = v.optional(v.nullable(v.string('must be a string or null')));

const isHttpUrl = (s: string) => /^https?:\/\//.test(s) && URL.canParse(s);
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

const HttpUrl = v.pipe(text('url'), v.check(isHttpUrl, 'must be an absolute URL starting with http:// or https://'));
const ConnectAddress = v.pipe(
  text('connect address'),
  v.check(
    (s) => s === '' || (s.startsWith('udp://') && URL.canParse(s) && new URL(s).hostname !== ''),
    'must be empty (same host and port as the API) or a udp:// URI such as udp://example.com:1212/',
  ),
);

export const StatusSchema = v.looseObject(
  {
    name: text('name'),
    players: count('players'),
    soft_max_players: v.optional(count('soft_max_players')),
    tags: v.optional(v.array(text('tag'), 'tags must be an array of strings')),
    // Read by the launcher with fixed types: anything else makes it list the server as offline.
    run_level: v.optional(
      v.nullable(
        v.pipe(
          v.number('run_level must be a number (0 lobby, 1 in round, 2 post round)'),
          v.integer('run_level must be a whole number'),
        ),
      ),
    ),
    round_start_time: v.optional(
      v.nullable(
        v.pipe(
          text('round_start_time'),
          v.check(
            (s) => ISO_DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)),
            'round_start_time must be an ISO-8601 date and time such as 2024-05-01T12:00:00.0000000Z',
          ),
        ),
      ),
    ),
  },
  'status must be a JSON object',
);
export type Status = v.InferOutput<typeof StatusSchema>;

export const BuildSchema = v.looseObject(
  {
    engine_version: optionalText,
    fork_id: optionalText,
    version: optionalText,
    download_url: optionalText,
    hash: optionalText,
    acz: v.optional(v.nullable(v.boolean('acz must be true or false'))),
    manifest_download_url: optionalText,
    manifest_url: optionalText,
    manifest_hash: optionalText,
  },
  'build must be an object or null',
);
export type Build = v.InferOutput<typeof BuildSchema>;

export const LinkSchema = v.looseObject(
  {
    name: text('name'),
    icon: v.optional(
      v.nullable(v.picklist(LINK_ICONS, `icon must be one of ${LINK_ICONS.join(', ')} (or null, or left out)`)),
    ),
    url: HttpUrl,
  },
  'a link must be an object with name, url and optionally icon',
);
export type Link = v.InferOutput<typeof LinkSchema>;

export const PrivacyPolicySchema = v.looseObject(
  {
    link: HttpUrl,
    identifier: v.pipe(text('identifier'), v.nonEmpty('identifier must not be empty')),
    version: v.pipe(text('version'), v.nonEmpty('version must not be empty')),
  },
  'privacy_policy must be an object with link, identifier and version',
);
export type PrivacyPolicy = v.InferOutput<typeof PrivacyPolicySchema>;

export const InfoSchema = v.looseObject(
  {
    /** The API documentation's spelling (sic). */
    connect_addrees: v.optional(ConnectAddress),
    /** The engine's and the launcher's spelling. */
    connect_address: v.optional(ConnectAddress),
    auth: v.looseObject(
      {
        mode: v.picklist(AUTH_MODES, `mode must be one of ${AUTH_MODES.join(', ')}`),
        public_key: v.optional(v.nullable(text('public_key'))),
      },
      'auth must be an object',
    ),
    build: v.nullable(BuildSchema),
    desc: v.optional(v.nullable(text('desc'))),
    /** The engine sends none unless the game adds some. */
    links: v.optional(v.array(LinkSchema, 'links must be an array of link objects')),
    privacy_policy: v.optional(PrivacyPolicySchema),
  },
  'info must be a JSON object',
);
export type Info = v.InferOutput<typeof InfoSchema>;

/** `path` is the dotted key path (`links.0.url`), '' for the object itself. */
export interface Problem {
  path: string;
  message: string;
}

export interface Validated<T> {
  /** When its shape is right (it may still have problems, a bad tag say). */
  value: T | undefined;
  problems: Problem[];
}

/** The parsed value, or the problems that kept it from parsing. */
function parse<S extends v.GenericSchema>(schema: S, raw: unknown, what: string) {
  // valibot's object schemas accept arrays (typeof 'object'); a launcher would not.
  if (Array.isArray(raw)) return { problems: [{ path: '', message: `${what} must be a JSON object` }] };
  const r = v.safeParse(schema, raw);
  if (r.success) return { output: r.output as v.InferOutput<S> };
  const problems = r.issues.map((issue) => {
    const missing = issue.input === undefined && issue.kind === 'schema';
    return { path: v.getDotPath(issue) ?? '', message: missing ? 'required but missing' : issue.message };
  });
  return { problems };
}

export function validateStatus(raw: unknown): Validated<Status> {
  const r = parse(StatusSchema, raw, 'status');
  if (!r.output) return { value: undefined, problems: r.problems };
  const problems = validateTags(r.output.tags ?? []).map((p) => ({
    path: `tags.${p.index}`,
    message: `"${p.tag}": ${p.message}`,
  }));
  return { value: r.output, problems };
}

/** Both spellings of the connect address are accepted, and must agree. */
export function validateInfo(raw: unknown): Validated<Info> {
  const r = parse(InfoSchema, raw, 'info');
  if (!r.output) return { value: undefined, problems: r.problems };
  const { connect_addrees: spec, connect_address: engine } = r.output;
  const problems: Problem[] = [];
  if (spec !== undefined && engine !== undefined && spec !== engine) {
    problems.push({
      path: 'connect_address',
      message: `differs from connect_addrees ("${engine}" vs "${spec}"); launchers read connect_address`,
    });
  }
  return { value: r.output, problems };
}
