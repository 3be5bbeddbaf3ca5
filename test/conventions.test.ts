/**
 * The test tree's own conventions, checked so they hold as tests are added: every title reads
 * `subject :: behaviour`, unique in its suite, and a file that is not a test sits in a `_support/` folder (so uvu's
 * `\.test\.ts$` pattern can never pick a helper up, and a reader tells helpers from tests by their path).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './_support/env.ts';
import { titlesIn, titlesOf } from './_support/test-titles.ts';

const TESTS = join(ROOT, 'test');
/** The folders of test/ held to these conventions: every one but the fixtures (files directly in test/ always are). */
const CHECKED = readdirSync(TESTS, { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'fixtures')
  .map((e) => e.name);
const isTest = (path: string) => /\.(test|e2e)\.ts$/.test(path);

/** Files below `dir`, as paths relative to test/. */
function filesBelow(dir: string): string[] {
  return readdirSync(join(TESTS, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(TESTS, join(e.parentPath, e.name)));
}

function checkedFiles(): string[] {
  const top = readdirSync(TESTS, { withFileTypes: true }).filter((e) => e.isFile());
  return [...top.map((e) => e.name), ...CHECKED.flatMap(filesBelow)];
}

const test = suite('conventions');

test('test titles :: the reader finds titles of suites, their aliases and templates', () => {
  const source = [
    "const s = suite('x');",
    'const it = why ? s.skip : s;',
    "s('one :: a', () => {});",
    's.skip("two", () => {});',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template title
    'it(`${mode} :: three`, () => {});',
    "helper('not a title');",
    "const { s: d, test: t } = smallDiskSuite('y', 1, prepare);",
    "t('four :: b', () => {});",
    's.run();',
  ].join('\n');
  const titles = titlesOf(source);
  assert.equal(
    titles.map((t) => [t.suite, t.text, t.line]),
    [
      ['s', 'one :: a', 3],
      ['s', 'two', 4],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template title as the reader gives it back
      ['it', '${mode} :: three', 5],
      ['t', 'four :: b', 8],
    ],
  );
});

test('test titles :: every title reads subject :: behaviour', () => {
  const offending = checkedFiles()
    .filter(isTest)
    .flatMap((f) =>
      titlesIn(join(TESTS, f))
        .filter((t) => !t.text.includes(' :: '))
        .map((t) => `${f}:${t.line}`),
    );
  assert.equal(offending, [], `titles without " :: " at ${offending.join(', ')}`);
});

test('test titles :: no two tests of one suite share a title', () => {
  const repeated = checkedFiles()
    .filter(isTest)
    .flatMap((f) => {
      const seen = new Set<string>();
      return titlesIn(join(TESTS, f)).flatMap((t) => {
        const key = `${t.suite}\0${t.text}`;
        const again = seen.has(key);
        seen.add(key);
        return again ? [`${f}:${t.line}`] : [];
      });
    });
  assert.equal(repeated, [], `a title registered twice in one suite at ${repeated.join(', ')}`);
});

test('helper files :: a file that is not a test sits in a _support folder, and none there is named as a test', () => {
  // fixtures/ holds the programs and data the tests run against, not helpers.
  const code = checkedFiles().filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && !f.startsWith('fixtures/'));
  const loose = code.filter((f) => !isTest(f) && !f.split('/').includes('_support'));
  const hidden = code.filter((f) => isTest(f) && f.split('/').includes('_support'));
  assert.equal(loose, [], `helpers outside a _support folder: ${loose.join(', ')}`);
  assert.equal(hidden, [], `files in a _support folder that uvu would run as tests: ${hidden.join(', ')}`);
});

test.run();
