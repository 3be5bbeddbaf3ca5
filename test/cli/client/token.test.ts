import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pickToken } from '../../../src/cli/client/target.ts';

const test = suite('pickToken :: precedence --token, WATCHDOG_TOKEN, config');

test('token :: --token wins over everything', () => {
  assert.equal(pickToken({ flag: 'f', env: 'e', config: 'c' }), { token: 'f', from: 'flag' });
});

test('token :: WATCHDOG_TOKEN wins over the config', () => {
  assert.equal(pickToken({ env: 'e', config: 'c' }), { token: 'e', from: 'env' });
});

test('token :: the config is the last resort', () => {
  assert.equal(pickToken({ config: 'c' }), { token: 'c', from: 'config' });
});

test('token :: empty strings count as unset; nothing anywhere is undefined', () => {
  assert.equal(pickToken({ flag: '', env: '', config: 'c' }), { token: 'c', from: 'config' });
  assert.is(pickToken({ flag: '', env: '' }), undefined);
  assert.is(pickToken({}), undefined);
});

test.run();
