import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { inferTags, languageName, REGIONS, regionName, regionsOf, validateTags } from '../../src/kit/tags.ts';

const infer = suite('tags :: inferTags');

/** [rule, name, explicit tags, expected inferred tags] */
const CASES: Array<[string, string, string[], string[]]> = [
  // rule 1: no_tag_infer disables everything, matched exactly
  ['no_tag_infer → nothing', '[EN][18+][HRP] X', ['no_tag_infer'], []],
  ['no_tag_infer among other tags → nothing', '[EN] X', ['region:eu_w', 'no_tag_infer'], []],
  ['NO_TAG_INFER (other case) does not disable', '[EN] X', ['NO_TAG_INFER'], ['lang:en']],
  // rule 2: 18+
  ['[18+] → 18+', '[18+] Foo', [], ['18+']],
  ['[+18] → 18+', 'Foo [+18]', [], ['18+']],
  ['[18+] and [+18] → one 18+', '[18+][+18] Foo', [], ['18+']],
  ['explicit 18+ is not repeated', '[18+] Foo', ['18+'], []],
  ['[18] is not a rule of the spec', '[18] Foo', [], []],
  ['[ERP] is not a rule of the spec', '[ERP] Foo', [], []],
  // rule 3: rp levels, only without an explicit rp: tag
  ['[NRP] → rp:none', '[NRP] X', [], ['rp:none']],
  ['[LRP] → rp:low', '[LRP] X', [], ['rp:low']],
  ['[MRP] → rp:med', '[MRP] X', [], ['rp:med']],
  ['[HRP] → rp:high', '[HRP] X', [], ['rp:high']],
  ['lower case [hrp] → rp:high', 'x [hrp]', [], ['rp:high']],
  ['mixed case [mRp] → rp:med', '[mRp]', [], ['rp:med']],
  ['every bracketed level gets its tag, in name order', '[NRP][HRP]', [], ['rp:none', 'rp:high']],
  ['explicit rp: wins', '[HRP] X', ['rp:low'], []],
  ['explicit RP: (prefix case-insensitive) wins', '[HRP] X', ['RP:low'], []],
  ['explicit rp: does not block other rules', '[HRP][EN] X', ['rp:low'], ['lang:en']],
  // rule 4: languages, only without an explicit lang: tag
  ['[EN] → lang:en', '[EN] Foo', [], ['lang:en']],
  ['[RU] → lang:ru', '[RU] Foo', [], ['lang:ru']],
  ['[en] lower case → lang:en', '[en] Foo', [], ['lang:en']],
  ['[ru][en] → both, in name order', '[ru][en] Foo', [], ['lang:ru', 'lang:en']],
  ['[EN][en] → one lang:en', '[EN] [en] Foo', [], ['lang:en']],
  ['explicit lang: wins', '[EN] Foo', ['lang:de'], []],
  ['explicit LANG: wins', '[RU] Foo', ['LANG:ru'], []],
  ['[RUS] is not a rule of the spec', '[RUS] Foo', [], []],
  ['[DE] is not a rule of the spec', '[DE] Foo', [], []],
  // tokens: shortest [...] match, content not trimmed
  ['spaces inside brackets do not match', '[ EN ] Foo', [], []],
  ['[EN/RU] does not match', '[EN/RU] Foo', [], []],
  ['no brackets → nothing', 'EN 18+ HRP Foo', [], []],
  ['unclosed bracket → nothing', '[EN Foo', [], []],
  ['nested brackets: shortest match', '[[EN]] Foo', [], []],
  ['tokens anywhere in the name', 'Foo [EN] bar [18+]', [], ['lang:en', '18+']],
  // everything at once, no duplicates with explicit tags
  ['all rules, name order', '[EN][18+][MRP] X', [], ['lang:en', '18+', 'rp:med']],
  ['only the missing ones are added', '[EN][18+][MRP] X', ['18+', 'region:eu_w'], ['lang:en', 'rp:med']],
  ['empty name → nothing', '', [], []],
];

for (const [rule, name, tags, expected] of CASES) {
  infer(`tags :: ${rule}: ${JSON.stringify(name)} + ${JSON.stringify(tags)}`, () => {
    assert.equal(inferTags(name, tags), expected);
  });
}
infer.run();

// ---
const validate = suite('tags :: validateTags');

/** [tag, problem message pattern or null when valid] */
const TAGS: Array<[string, RegExp | null]> = [
  ['18+', null],
  ['no_tag_infer', null],
  ['lang:en', null],
  ['lang:ru', null],
  ['lang:en-GB', null],
  ['lang:pt-BR', null],
  ['lang:EN', null],
  ['lang:yue', null],
  ['lang:xx', /not an IETF language tag/],
  ['lang:', /not an IETF language tag/],
  ['lang:english', /not an IETF language tag/],
  ['rp:none', null],
  ['rp:low', null],
  ['rp:med', null],
  ['rp:high', null],
  ['rp:medium', /rp:none, rp:low, rp:med, rp:high/],
  ['rp:', /role-play level/],
  ['region:eu_w', null],
  ['region:luna', null],
  ['region:am_n_c', null],
  ['region:EU_W', /lower case: region:eu_w/],
  ['region:mars', /unknown region code "mars"/],
  ['region:', /unknown region code/],
  ['NO_TAG_INFER', /case-sensitive/],
  ['', /empty tag/],
  [' 18+', /spaces/],
  ['my-custom-tag', null],
  ['ss14', null],
];

for (const [tag, problem] of TAGS) {
  validate(`tags :: ${JSON.stringify(tag)} → ${problem ? 'problem' : 'valid'}`, () => {
    const found = validateTags(['ok', tag]);
    if (problem === null) {
      assert.equal(found, []);
    } else {
      assert.is(found.length, 1);
      assert.is(found[0]?.index, 1);
      assert.is(found[0]?.tag, tag);
      assert.match(found[0]?.message ?? '', problem);
    }
  });
}
validate.run();

// ---
const regions = suite('tags :: regions');

regions('tags :: the table has the 21 codes of the spec with their names', () => {
  assert.equal(Object.keys(REGIONS).sort(), [
    'af_c',
    'af_n',
    'af_s',
    'am_c',
    'am_n_c',
    'am_n_e',
    'am_n_w',
    'am_s_e',
    'am_s_s',
    'am_s_w',
    'as_e',
    'as_n',
    'as_se',
    'ata',
    'eu_e',
    'eu_w',
    'grl',
    'ind',
    'luna',
    'me',
    'oce',
  ]);
  assert.is(regionName('eu_w'), 'Western Europe');
  assert.is(regionName('luna'), 'The Moon (joke option)');
  assert.is(regionName('toString'), undefined, 'no prototype keys');
});

regions('tags :: regionsOf picks the known region tags with names', () => {
  assert.equal(regionsOf(['18+', 'region:eu_w', 'region:mars', 'region:as_se']), [
    { tag: 'region:eu_w', code: 'eu_w', name: 'Western Europe' },
    { tag: 'region:as_se', code: 'as_se', name: 'Southeast Asia' },
  ]);
});

regions('tags :: languageName judges the primary subtag', () => {
  assert.is(languageName('en-GB'), 'English');
  assert.is(languageName('ru'), 'Russian');
  assert.is(languageName('zz'), undefined);
  assert.is(languageName('1'), undefined);
});
regions.run();
