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

/** The display name of a region code, or undefined when the code is not in the table. */
export function regionName(code: string): string | undefined {
  return isRegionCode(code) ? REGIONS[code] : undefined;
}

export interface RegionTag {
  tag: string;
  code: RegionCode;
  name: string;
}

/** The known `region:` tags of a tag list, with their names (unknown codes are left to validation). */
export function regionsOf(tags: readonly string[]): RegionTag[] {
  const out: RegionTag[] = [];
  for (const tag of tags) {
    if (!tag.startsWith('region:')) continue;
    const code = tag.slice('region:'.length);
    if (isRegionCode(code)) out.push({ tag, code, name: REGIONS[code] });
  }
  return out;
}
