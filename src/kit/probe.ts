import { connectAddressOf } from './api-watchdog.ts';
import { AnswerTooLargeError, readCapped } from './capped-body.ts';
import { type Info, type Problem, type Status, type Validated, validateInfo, validateStatus } from './schemas.ts';
import { inferTags, type RegionTag, regionsOf } from './tags.ts';

export class AddressError extends Error {
  override name = 'AddressError';
}

const SCHEMES: Record<string, { http: 'http' | 'https'; defaultPort: string | null }> = {
  ss14: { http: 'http', defaultPort: '1212' },
  ss14s: { http: 'https', defaultPort: null },
  http: { http: 'http', defaultPort: null },
  https: { http: 'https', defaultPort: null },
};

/**
 * As the launcher's `UriHelper.cs` reads it: no `://` → `ss14://`; `ss14` → `http` on 1212 by default, `ss14s` →
 * `https`; the path kept with a `/`, `/status` and `/info` resolved against it; `http(s)://` as they are.
 */
export function normaliseAddress(input: string) {
  const raw = input.trim();
  if (raw === '') throw new AddressError('no server address given (e.g. 127.0.0.1:1212 or ss14://play.example)');
  if (/\s/.test(raw)) throw new AddressError(`"${raw}" is not a server address: it contains spaces`);
  const withScheme = raw.includes('://') ? raw : `ss14://${raw}`;
  let parsed: URL;
  try {
    // ss14/ss14s are not "special" schemes for WHATWG URL: a typed :80 survives.
    parsed = new URL(withScheme);
  } catch (err) {
    throw new AddressError(`"${raw}" is not a valid server address`, { cause: err });
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  const kind = SCHEMES[scheme];
  if (!kind)
    throw new AddressError(
      `"${raw}": scheme ${scheme}:// is not supported; use ss14://, ss14s://, http:// or https://`,
    );
  if (parsed.hostname === '') throw new AddressError(`"${raw}" has no host`);
  if (parsed.port === '0') throw new AddressError(`"${raw}": port 0 is not a server port`);
  let api: URL;
  try {
    api = new URL(`${kind.http}://${parsed.host}`);
  } catch (err) {
    throw new AddressError(`"${raw}" has an invalid host`, { cause: err });
  }
  if (parsed.port === '' && kind.defaultPort !== null) api.port = kind.defaultPort;
  api.pathname = parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`;
  return { api, statusUrl: new URL('status', api), infoUrl: new URL('info', api) };
}

/** Where a launcher connects when `/info` gives no address (its `Connector.cs`): `udp://h:443/` for `ss14s://h`. */
export function derivedConnectAddress(infoUrl: URL): string {
  const port = infoUrl.port || (infoUrl.protocol === 'https:' ? '443' : '80');
  return `udp://${infoUrl.hostname}:${port}/`;
}

/** The launcher's `ConfigConstants.ServerStatusTimeout`. */
const PROBE_TIMEOUT_MS = 5000;

/** What `watchdog probe --json` prints, a shape scripts rely on; payloads as received, or null. */
export interface ProbeResult {
  address: string;
  statusUrl: string;
  infoUrl: string;
  status: unknown;
  info: unknown;
  tags: { explicit: string[]; inferred: string[] };
  regions: RegionTag[];
  /** From `/info`, or derived from its URL; null when `/info` could not be read. */
  connectAddress: string | null;
  /** Empty: a launcher would list and connect fine. */
  problems: Problem[];
}

/** With the parsed payloads, for printing. */
export interface ProbeDetails {
  result: ProbeResult;
  status: Status | undefined;
  info: Info | undefined;
}

type Fetched = { ok: true; json: unknown } | { ok: false; message: string };

/** The engine's are a few kB. */
const PROBE_ANSWER_CAP_BYTES = 256_000;

async function getJson(url: URL, timeoutMs: number): Promise<Fetched> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') return { ok: false, message: `no answer within ${timeoutMs / 1000} s` };
    const cause = e.cause instanceof Error ? e.cause.message : e.message;
    return { ok: false, message: `unreachable: ${cause}` };
  }
  let text = '';
  try {
    text = (await readCapped(res.body, PROBE_ANSWER_CAP_BYTES, 'the body')).toString('utf8');
  } catch (err) {
    if (err instanceof AnswerTooLargeError) return { ok: false, message: `answered ${res.status}, but ${err.message}` };
  }
  if (!res.ok) return { ok: false, message: `answered ${res.status} ${res.statusText}`.trimEnd() };
  try {
    return { ok: true, json: JSON.parse(text) as unknown };
  } catch {
    return {
      ok: false,
      message: `answered ${res.status} but the body is not JSON: ${JSON.stringify(text.slice(0, 80))}`,
    };
  }
}

/**
 * Reads `/status` and `/info` as a launcher would, reporting every problem; throws only `AddressError`.
 *
 * @example
 * const { result } = await probe('127.0.0.1:1212');
 * if (result.problems.length) console.log(result.problems);
 */
export async function probe(address: string, opts: { timeoutMs?: number } = {}): Promise<ProbeDetails> {
  const { statusUrl, infoUrl } = normaliseAddress(address);
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  const [statusRes, infoRes] = await Promise.all([getJson(statusUrl, timeoutMs), getJson(infoUrl, timeoutMs)]);
  const problems: Problem[] = [];
  /** The payload as validated, its problems under `prefix`; undefined when unread or misshapen. */
  const check = <T>(res: Fetched, url: URL, prefix: string, validate: (raw: unknown) => Validated<T>) => {
    if (!res.ok) return void problems.push({ path: prefix, message: `GET ${url.href} ${res.message}` });
    const v = validate(res.json);
    for (const p of v.problems)
      problems.push({ path: p.path === '' ? prefix : `${prefix}.${p.path}`, message: p.message });
    return v.value;
  };
  const status = check(statusRes, statusUrl, 'status', validateStatus);
  const info = check(infoRes, infoUrl, 'info', validateInfo);
  const given = info ? connectAddressOf(info) : '';
  const connectAddress = !infoRes.ok ? null : given !== '' ? given : derivedConnectAddress(infoUrl);

  const explicit = status?.tags ?? [];
  const result: ProbeResult = {
    address,
    statusUrl: statusUrl.href,
    infoUrl: infoUrl.href,
    status: statusRes.ok ? statusRes.json : null,
    info: infoRes.ok ? infoRes.json : null,
    tags: { explicit, inferred: status ? inferTags(status.name, explicit) : [] },
    regions: regionsOf(explicit),
    connectAddress,
    problems,
  };
  return { result, status, info };
}

const list = (items: string[]) => (items.length ? items.join(', ') : '(none)');

/** `watchdog probe`'s report: a `label: value` line per fact, then the problems. */
export function formatProbe({ result, status, info }: ProbeDetails): string {
  const lines: Array<[string, string]> = [
    ['address', result.address],
    ['status url', result.statusUrl],
    ['info url', result.infoUrl],
  ];
  if (status) {
    const max = status.soft_max_players === undefined ? '' : ` / ${status.soft_max_players}`;
    lines.push(
      ['name', status.name],
      ['players', `${status.players}${max}`],
      ['tags', list(result.tags.explicit)],
      ['inferred tags', list(result.tags.inferred)],
      ['regions', list(result.regions.map((r) => `${r.code} (${r.name})`))],
    );
  }
  if (info) {
    lines.push(['description', info.desc ?? '(none)']);
    lines.push(['auth', `${info.auth.mode}${info.auth.public_key ? ` (public key ${info.auth.public_key})` : ''}`]);
    const links = info.links ?? [];
    if (links.length === 0) lines.push(['links', '(none)']);
    for (const link of links) lines.push(['link', `${link.name}${link.icon ? ` [${link.icon}]` : ''} ${link.url}`]);
    const pp = info.privacy_policy;
    lines.push(['privacy policy', pp ? `${pp.link} (identifier ${pp.identifier}, version ${pp.version})` : '(none)']);
    const build = Object.entries(info.build ?? {}).filter(([, v]) => v !== null && v !== '');
    lines.push(['build', info.build ? list(build.map(([k, v]) => `${k}=${String(v)}`)) : '(none)']);
  }
  if (result.connectAddress !== null) {
    const derived = info !== undefined && connectAddressOf(info) === '';
    lines.push(['connect address', `${result.connectAddress}${derived ? ' (derived: /info gives none)' : ''}`]);
  }
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  const out = lines.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`);
  if (result.problems.length === 0) out.push('', 'valid: no problems found');
  else
    out.push(
      '',
      `${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}:`,
      ...result.problems.map((p) => `  ${p.path}: ${p.message}`),
    );
  return out.join('\n') + '\n';
}
