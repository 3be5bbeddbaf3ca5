import type { ProbeDetails } from './probe.ts';
import { connectAddressOf } from './schemas-wire.ts';

const list = (items: string[]) => (items.length ? items.join(', ') : '(none)');

/** The human-readable report of `watchdog probe`: one `label: value` line per fact, then the problems. */
export function formatProbe({ result, status, info }: ProbeDetails): string {
  const lines: Array<[string, string]> = [
    ['address', result.address],
    ['status url', result.statusUrl],
    ['info url', result.infoUrl],
  ];
  if (status) {
    lines.push(['name', status.name]);
    lines.push([
      'players',
      status.soft_max_players === undefined ? `${status.players}` : `${status.players} / ${status.soft_max_players}`,
    ]);
    lines.push(['tags', list(result.tags.explicit)]);
    lines.push(['inferred tags', list(result.tags.inferred)]);
    lines.push(['regions', list(result.regions.map((r) => `${r.code} (${r.name})`))]);
  }
  if (info) {
    lines.push(['description', info.desc ?? '(none)']);
    lines.push(['auth', `${info.auth.mode}${info.auth.public_key ? ` (public key ${info.auth.public_key})` : ''}`]);
    const links = info.links ?? [];
    if (links.length === 0) lines.push(['links', '(none)']);
    for (const link of links) lines.push(['link', `${link.name}${link.icon ? ` [${link.icon}]` : ''} ${link.url}`]);
    const pp = info.privacy_policy;
    lines.push(['privacy policy', pp ? `${pp.link} (identifier ${pp.identifier}, version ${pp.version})` : '(none)']);
    lines.push([
      'build',
      info.build
        ? list(
            Object.entries(info.build)
              .filter(([, v]) => v !== null && v !== '')
              .map(([k, v]) => `${k}=${String(v)}`),
          )
        : '(none)',
    ]);
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
