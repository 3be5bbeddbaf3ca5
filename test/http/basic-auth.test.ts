import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseBasicAuth } from '../../src/http/basic-auth.ts';
import { b64 } from './_support/app.ts';

const parse = suite('basic-auth :: parseBasicAuth');

parse('basic-auth :: splits at the first colon only', () => {
  assert.equal(parseBasicAuth(`Basic ${b64('alpha:a:b:c')}`), { kind: 'ok', user: 'alpha', password: 'a:b:c' });
  assert.equal(parseBasicAuth(`Basic ${b64('alpha:')}`), { kind: 'ok', user: 'alpha', password: '' });
  assert.equal(parseBasicAuth(`Basic ${b64(':pw')}`), { kind: 'ok', user: '', password: 'pw' });
});

parse('basic-auth :: the scheme name is case-insensitive and extra spaces are tolerated', () => {
  for (const scheme of ['Basic', 'basic', 'BASIC', 'bAsIc']) {
    assert.equal(parseBasicAuth(`${scheme} ${b64('k:p')}`), { kind: 'ok', user: 'k', password: 'p' }, scheme);
  }
  assert.equal(parseBasicAuth(`  Basic   ${b64('k:p')}`), { kind: 'ok', user: 'k', password: 'p' });
});

parse('basic-auth :: unicode user and password decode as UTF-8', () => {
  assert.equal(parseBasicAuth(`Basic ${b64('ключ:пароль🔑')}`), { kind: 'ok', user: 'ключ', password: 'пароль🔑' });
});

parse('basic-auth :: unpadded base64 is accepted, a lone trailing character is not', () => {
  const padded = b64('k:pw'); // "azpwdw=="
  assert.is(parseBasicAuth(`Basic ${padded.replace(/=+$/, '')}`).kind, 'ok');
  assert.is(parseBasicAuth(`Basic ${padded.replace(/=+$/, '')}AAA`).kind, 'malformed');
});

parse('basic-auth :: missing or other schemes → missing (401)', () => {
  for (const h of [
    undefined,
    null,
    '',
    '   ',
    'Bearer abc',
    'Digest username="x"',
    'Basicx abc',
    `Token ${b64('k:p')}`,
  ]) {
    assert.is(parseBasicAuth(h).kind, 'missing', String(h));
  }
});

parse('basic-auth :: bad base64, bad UTF-8 or no colon → malformed (400)', () => {
  for (const h of [
    'Basic',
    'Basic ',
    'Basic !!!',
    'Basic definitely not base64',
    `Basic ${b64('k:p')}=`,
    `Basic ${b64('nocolon')}`,
    `Basic ${Buffer.from([0xc3, 0x28, 0x3a]).toString('base64')}`,
    'Basic a-b_c', // base64url alphabet is not Basic's
  ]) {
    assert.is(parseBasicAuth(h).kind, 'malformed', h);
  }
});

parse.run();
