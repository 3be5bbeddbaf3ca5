/** Region codes for `region:<code>` tags, with their display names, in the order the API documentation lists them. */
export const REGIONS = {
  eu_w: 'Western Europe',
  eu_e: 'Eastern Europe',
  ata: 'Antarctica (joke option)',
  grl: 'Greenland (joke option)',
  am_n_w: 'North America, West',
  am_n_c: 'North America, Centre',
  am_n_e: 'North America, East',
  am_c: 'Central America',
  am_s_s: 'South America, South',
  am_s_e: 'South America, East',
  am_s_w: 'South America, West',
  af_n: 'North Africa',
  af_c: 'Central Africa',
  af_s: 'South Africa',
  me: 'Middle East',
  as_n: 'North Asia',
  as_se: 'Southeast Asia',
  as_e: 'East Asia',
  ind: 'India',
  oce: 'Oceania',
  luna: 'The Moon (joke option)',
} as const satisfies Record<string, string>;

export type RegionCode = keyof typeof REGIONS;

export function isRegionCode(code: string): code is RegionCode {
  return Object.hasOwn(REGIONS, code);
}

export function regionName(code: string): string | undefined {
  return isRegionCode(code) ? REGIONS[code] : undefined;
}

export interface RegionTag {
  tag: string;
  code: RegionCode;
  name: string;
}

/** The known `region:` tags of a list (unknown codes are left to validation). */
export function regionsOf(tags: readonly string[]): RegionTag[] {
  return tags.flatMap((tag) => {
    const code = tag.slice('region:'.length);
    return tag.startsWith('region:') && isRegionCode(code) ? [{ tag, code, name: REGIONS[code] }] : [];
  });
}

/** The tag that turns all inference off. Compared exactly, as the launcher does. */
export const NO_TAG_INFER = 'no_tag_infer';
export const RP_LEVELS = ['none', 'low', 'med', 'high'] as const;

export interface TagProblem {
  index: number;
  tag: string;
  message: string;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** The English name of a `lang:` value's primary subtag, as the launcher judges it, or undefined. */
export function languageName(value: string): string | undefined {
  const primary = value.split('-')[0]?.toLowerCase() ?? '';
  if (!/^[a-z]{2,8}$/.test(primary)) return undefined;
  try {
    return languageNames.of(primary);
  } catch {
    return undefined;
  }
}

const startsWithCi = (tag: string, prefix: string) => tag.slice(0, prefix.length).toLowerCase() === prefix;

function checkTag(tag: string): string | undefined {
  if (tag.trim() === '') return 'empty tag (check hub.tags for doubled or trailing commas)';
  if (tag !== tag.trim()) return 'tag has leading or trailing spaces; launchers compare tags exactly';
  if (tag !== NO_TAG_INFER && tag.toLowerCase() === NO_TAG_INFER)
    return `tags are case-sensitive: write "${NO_TAG_INFER}" to disable tag inference`;
  if (startsWithCi(tag, 'lang:')) {
    const value = tag.slice(5);
    if (languageName(value) !== undefined) return undefined;
    return `"${value}" is not an IETF language tag with a known primary subtag (e.g. lang:en, lang:pt-BR)`;
  }
  if (startsWithCi(tag, 'rp:')) {
    if ((RP_LEVELS as readonly string[]).includes(tag.slice(3))) return undefined;
    return `role-play level must be one of ${RP_LEVELS.map((l) => `rp:${l}`).join(', ')}`;
  }
  if (startsWithCi(tag, 'region:')) {
    const code = tag.slice(7);
    if (isRegionCode(code) && tag.startsWith('region:')) return undefined;
    if (isRegionCode(code.toLowerCase())) return `write region tags in lower case: region:${code.toLowerCase()}`;
    return `unknown region code "${code}" (see the region table, e.g. region:eu_w)`;
  }
  return undefined;
}

/** Problems with the standard tags of a `tags` list; custom tags are allowed and not reported. */
export function validateTags(tags: readonly string[]): TagProblem[] {
  return tags.flatMap((tag, index) => {
    const message = checkTag(tag);
    return message === undefined ? [] : [{ index, tag, message }];
  });
}

/** Bracket token (lower-cased) → the tag it infers; no other token infers anything. */
const TOKEN_TAGS = new Map<string, string>([
  ['18+', '18+'],
  ['+18', '18+'],
  ['nrp', 'rp:none'],
  ['lrp', 'rp:low'],
  ['mrp', 'rp:med'],
  ['hrp', 'rp:high'],
  ['en', 'lang:en'],
  ['ru', 'lang:ru'],
]);

/**
 * The tags a launcher infers from the `[...]` tokens of a server name (case-insensitive), in the name's order, none
 * twice or repeating an explicit tag; an explicit `rp:`/`lang:` tag suppresses that kind. Where the launcher
 * (`ServerTagInfer.cs`) differs, the spec is followed: no `[18]`, `[ERP]`, `[RUS]`; every bracketed language and level
 * (the launcher: one each); the name's order (the launcher: lang, 18+, rp).
 *
 * @example
 * inferTags('[EN][18+] Test', []) // → ['lang:en', '18+']
 */
export function inferTags(name: string, tags: readonly string[]): string[] {
  if (tags.includes(NO_TAG_INFER)) return [];
  const explicitRp = tags.some((t) => startsWithCi(t, 'rp:'));
  const explicitLang = tags.some((t) => startsWithCi(t, 'lang:'));
  const out: string[] = [];
  for (const match of name.matchAll(/\[(.*?)\]/g)) {
    const tag = TOKEN_TAGS.get((match[1] ?? '').toLowerCase());
    if (tag === undefined) continue;
    if (explicitRp && tag.startsWith('rp:')) continue;
    if (explicitLang && tag.startsWith('lang:')) continue;
    if (tags.includes(tag) || out.includes(tag)) continue;
    out.push(tag);
  }
  return out;
}
