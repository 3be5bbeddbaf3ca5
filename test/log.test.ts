import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { configureLogging, createLogger, parseLogLevel } from '../src/log.ts';

const log = suite('log');

log('log :: secrets never reach a line, whatever the caller passes', () => {
  const lines: string[] = [];
  configureLogging({ level: 'debug', json: false, write: (l) => lines.push(l) });
  createLogger('t').info('checked in', { key: 'demo', token: 'hunter2', ApiToken: 'x', Authorization: 'Basic abc' });
  configureLogging({ level: 'info', write: (l) => process.stderr.write(l + '\n') });
  assert.is(lines.length, 1);
  assert.not.match(lines[0] ?? '', /hunter2|Basic abc/);
  assert.match(lines[0] ?? '', /key=demo/);
});

log('log :: level filters and Serilog names map', () => {
  const lines: string[] = [];
  configureLogging({ level: 'warn', write: (l) => lines.push(l) });
  const l = createLogger('t');
  l.info('hidden');
  l.warn('shown');
  configureLogging({ level: 'info', write: (x) => process.stderr.write(x + '\n') });
  assert.equal(lines.length, 1);
  assert.is(parseLogLevel('Information'), 'info');
  assert.is(parseLogLevel('Warning'), 'warn');
  assert.is(parseLogLevel('Verbose'), 'debug');
  assert.is(parseLogLevel('nonsense'), undefined);
});

log.run();
