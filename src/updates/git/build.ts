import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import type { UpdatesSettings } from '../../config/schema.ts';
import { UpdateError } from '../../errors.ts';
import {
  CLIENT_SCRIPT,
  detectEngine,
  ENGINE_ENV,
  hasClientScript,
  packagingSteps,
  pythonSteps,
  SERVER_SCRIPT,
} from './engine.ts';
import { globFiles } from './glob.ts';
import { gitEnv } from './remote.ts';
import { type RepoContext, runChecked } from './repo.ts';

/*
 * A checkout becomes a server archive by the engine's packaging (git/engine.ts), else `Updates.BuildCommand` with
 * `sh -c` in `source/` (told `WATCHDOG_PLATFORM` and `WATCHDOG_HYBRID_ACZ`); found by `Updates.Artifact`, a
 * non-hybrid client zip by `ClientArtifact`.
 */

export const DEFAULT_CLIENT_PATTERN = 'release/*Client*.zip';

/** The build's steps; globs relative to source/, no client pattern for a hybrid (ACZ) build, whose server hosts it. */
export async function planBuild(sourceDir: string, updates: UpdatesSettings, rid: string) {
  const hybrid = updates.HybridACZ;
  const env: Record<string, string> = { WATCHDOG_PLATFORM: rid, WATCHDOG_HYBRID_ACZ: String(hybrid) };
  const patterns = {
    serverPattern: updates.Artifact ?? `release/*${rid}*.zip`,
    clientPattern: hybrid ? null : (updates.ClientArtifact ?? DEFAULT_CLIENT_PATTERN),
  };
  const engine = await detectEngine(sourceDir);
  // Said before anything runs, rather than after the server build as python's "can't open file".
  if (engine === 'python' && !hybrid && !(await hasClientScript(sourceDir))) {
    throw new UpdateError(
      `the repository in ${sourceDir} has ${SERVER_SCRIPT} but no ${CLIENT_SCRIPT}, which a build with HybridACZ false needs`,
    );
  }
  if (engine !== null) {
    const steps = engine === 'packaging' ? packagingSteps(rid, hybrid) : pythonSteps(rid, hybrid);
    return { kind: engine, steps, env: { ...env, ...ENGINE_ENV }, ...patterns };
  }
  const command = updates.BuildCommand?.trim();
  if (!command) {
    throw new UpdateError(
      `the repository in ${sourceDir} has neither a Content.Packaging project nor ${SERVER_SCRIPT}, and ` +
        'Updates.BuildCommand is not set: set BuildCommand to a shell command that builds the server archive ' +
        '(found by Updates.Artifact)',
    );
  }
  return {
    kind: 'command' as const,
    steps: [{ what: 'the build command (Updates.BuildCommand)', program: 'sh', args: ['-c', command] }],
    env,
    ...patterns,
  };
}

type BuildPlan = Awaited<ReturnType<typeof planBuild>>;

/** Deletes what earlier builds left matching the patterns, so only this build's output is found. */
export async function removeStaleArtifacts(sourceDir: string, plan: BuildPlan): Promise<void> {
  for (const pattern of [plan.serverPattern, plan.clientPattern]) {
    if (pattern === null) continue;
    for (const file of await globFiles(sourceDir, pattern)) await rm(file, { force: true });
  }
}

export async function runBuild(plan: BuildPlan, repo: RepoContext, signal: AbortSignal): Promise<void> {
  // The build gets no git credentials: only git itself talks to the remote.
  const env = gitEnv(repo.instanceDir, plan.env);
  for (const step of plan.steps) {
    repo.sink?.write(`$ ${step.program} ${step.args.join(' ')}\n`);
    await runChecked(step.program, step.args, {
      cwd: repo.sourceDir,
      env,
      signal,
      timeoutMs: repo.timeouts.buildMs,
      sink: repo.sink,
      what: step.what,
      logHint: repo.logHint,
    });
  }
}

export async function findArtifact(sourceDir: string, pattern: string, setting: string): Promise<string> {
  const found = await globFiles(sourceDir, pattern, setting);
  if (found.length === 1) return found[0] as string;
  if (found.length === 0) {
    throw new UpdateError(`the build finished but produced no file matching ${setting} "${pattern}" in ${sourceDir}`);
  }
  throw new UpdateError(
    `the build produced several files matching ${setting} "${pattern}" (${found.map((f) => basename(f)).join(', ')}): make the pattern name one`,
  );
}
