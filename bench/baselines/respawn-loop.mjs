#!/usr/bin/env node
/**
 * The floor for the crash → relaunch gap: the least a supervisor can do. Spawns `node <script>` and spawns it
 * again the moment it exits, nothing else (no pipes, no state, no back-off). Usage:
 *   node respawn-loop.mjs <script> [maxLaunches]
 * SIGTERM kills the current child and exits. Stops by itself after maxLaunches (default 1000) as a leak guard.
 */
import { spawn } from 'node:child_process';

const [script, max = '1000'] = process.argv.slice(2);
let launches = 0;
let child = null;
let stopping = false;

function launch() {
  if (stopping || launches >= Number(max)) return;
  launches += 1;
  child = spawn(process.execPath, [script], { stdio: 'ignore' });
  child.once('exit', launch);
}

process.on('SIGTERM', () => {
  stopping = true;
  child?.kill('SIGKILL');
  process.exit(0);
});
launch();
