import { derivedConnectAddress, normaliseAddress } from './probe-address.ts';
import { type Info, type Problem, type Status, validateInfo, validateStatus } from './schemas.ts';
import { connectAddressOf } from './schemas-wire.ts';
import { inferTags, type RegionTag, regionsOf } from './tags.ts';

export { AddressError, derivedConnectAddress, normaliseAddress, type ServerAddress } from './probe-address.ts';

/** The launcher's status timeout (its `ConfigConstants.ServerStatusTimeout`). */
export const PROBE_TIMEOUT_MS = 5000;

/** What `watchdog probe --json` prints (a fixed shape scripts may rely on); payloads are the JSON as received, or null. */
export interface ProbeResult {
  address: string;
  statusUrl: string;
  infoUrl: string;
  status: unknown;
  info: unknown;
  tags: { explicit: string[]; inferred: string[] };
  regions: RegionTag[];
  /** From `/info`, or derived from the info URL when empty; null when `/info` could not be read. */
  connectAddress: string | null;
  /** Everything wrong, `status.*`/`info.*` paths; empty means a launcher would list and connect fine. */
  problems: Problem[];
}

/** Parsed views of the payloads, for printing; not part of the JSON output. */
export interface ProbeDetails {
  result: ProbeResult;
  status: Status | undefined;
  info: Info | undefined;
}

type Fetched = { ok: true; json: unknown } | { ok: false; message: string };

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
  const text = await res.text().catch(() => '');
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

const under = (prefix: string, problems: Problem[]): Problem[] =>
  problems.map((p) => ({ path: p.path === '' ? prefix : `${prefix}.${p.path}`, message: p.message }));

/**
 * Reads a server's `/status` and `/info` as a launcher would and reports every problem found.
 * Throws `AddressError` when the address cannot be understood; never throws for an unreachable
 * or broken server (those are problems).
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

  let status: Status | undefined;
  if (statusRes.ok) {
    const v = validateStatus(statusRes.json);
    status = v.value;
    problems.push(...under('status', v.problems));
  } else {
    problems.push({ path: 'status', message: `GET ${statusUrl.href} ${statusRes.message}` });
  }

  let info: Info | undefined;
  let connectAddress: string | null = null;
  if (infoRes.ok) {
    const v = validateInfo(infoRes.json);
    info = v.value;
    problems.push(...under('info', v.problems));
    const given = info ? connectAddressOf(info) : '';
    connectAddress = given !== '' ? given : derivedConnectAddress(infoUrl);
  } else {
    problems.push({ path: 'info', message: `GET ${infoUrl.href} ${infoRes.message}` });
  }

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
