/** The pieces of the files feature without a daemon: byte ranges, the Files.Folders setting, the panel's rows. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { DEFAULT_FILE_FOLDERS, FilesSchema, folderProblem } from '../../src/config/sections/files.ts';
import { fileRows, filesUrl, parentPath } from '../../src/http/dashboard/assets/files-view.js';
import { parseRange } from '../../src/http/file-routes.ts';

const test = suite('files :: units');

test('files :: a single byte range: middle, open end, suffix, clipped end; past the end is unsatisfiable', () => {
  assert.equal(parseRange('bytes=10-19', 100), { kind: 'part', start: 10, end: 19 });
  assert.equal(parseRange('bytes=90-', 100), { kind: 'part', start: 90, end: 99 });
  assert.equal(parseRange('bytes=-5', 100), { kind: 'part', start: 95, end: 99 });
  assert.equal(parseRange('bytes=-500', 100), { kind: 'part', start: 0, end: 99 });
  assert.equal(parseRange('bytes=95-1000', 100), { kind: 'part', start: 95, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), { kind: 'unsatisfiable' });
  assert.equal(parseRange('bytes=-0', 100), { kind: 'unsatisfiable' });
  assert.equal(parseRange('bytes=0-', 0), { kind: 'unsatisfiable' });
});

test('files :: no range, another unit, several ranges or a reversed one: the whole file', () => {
  for (const h of [undefined, 'items=0-1', 'bytes=0-1,4-5', 'bytes=9-3', 'bytes=-', 'bytes=a-b', 'bytes 0-1'])
    assert.equal(parseRange(h, 100), { kind: 'whole' }, String(h));
});

test('files :: Files.Folders defaults to replays, logs, dumps and backups; escaping or hidden folders are refused', () => {
  assert.equal(v.parse(FilesSchema, undefined).Folders, [...DEFAULT_FILE_FOLDERS]);
  assert.equal(DEFAULT_FILE_FOLDERS, ['data/replays', 'logs', 'dumps']);
  assert.equal(v.parse(FilesSchema, { Folders: ['data/replays', 'data/logs/x'] }).Folders, [
    'data/replays',
    'data/logs/x',
  ]);
  for (const bad of ['/etc', '../x', 'data/../..', 'data//x', 'data/', '.git', 'a\\b', 'C:/x', '', 'data/./x']) {
    assert.ok(folderProblem(bad) !== null, bad);
    assert.not.ok(v.safeParse(FilesSchema, { Folders: [bad] }).success, bad);
  }
  assert.not.ok(v.safeParse(FilesSchema, { Folder: ['logs'] }).success, 'unknown key');
});

test('files :: the panel: folders open in place, files link to their encoded download, Up goes one folder higher', () => {
  const rows = fileRows('a b', {
    path: 'data/replays',
    entries: [
      { name: 'round 1', type: 'folder', size: 0, modified: '2026-01-01T00:00:00.000Z' },
      { name: 'r#1.zip', type: 'file', size: 5, modified: '2026-01-01T00:00:00.000Z' },
    ],
    truncated: 0,
  });
  assert.equal(
    rows.map((r) => [r.name, r.folder, r.href, r.size]),
    [
      ['round 1/', 'data/replays/round 1', null, null],
      ['r#1.zip', null, '/api/instances/a%20b/files/data/replays/r%231.zip', 5],
    ],
  );
  assert.is(filesUrl('k', ''), '/api/instances/k/files');
  assert.is(parentPath('data/replays'), 'data');
  assert.is(parentPath('logs'), '');
  assert.is(parentPath(''), null);
});

test.run();
