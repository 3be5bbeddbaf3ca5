import { createWriteStream, type WriteStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { DEFAULT_CLIENT_PATTERN, findArtifact, planBuild, removeStaleArtifacts, runBuild } from '../git/build.ts';
import { segmentMatcher, splitPattern } from '../git/glob.ts';
import { DEFAULT_GIT_TIMEOUTS, remoteHead, syncCheckout, type GitTimeouts, type RepoContext } from '../git/repo.ts';
import { checkBranch, forkIdOf, parseRemote } from '../git/remote.ts';
import { writeBuildJson, type BuildJson } from '../git/build-json.ts';
import { commitStaged, discardStaged, stageArchive, updateDir } from '../install/install.ts';
import { clientDownloadUrl, clientZipHash, createClientCvars } from './local-client.ts';
import { hostPackagingRid } from '../platform.ts';
import type { ProviderContext, UpdateCheck, UpdateProvider } from '../provider.ts';

/**
 * `UpdateType: Git` (the real watchdog's `UpdateProviderGit.cs`): watches `Updates.Branch` of the repository at
 * `Updates.BaseUrl`, and on an update clones or fetches it into `<instance>/source`, builds it (git/build.ts) with
 * the output in `logs/build.log`, and installs the server archive through the shared pipeline, so a failed build
 * or install leaves `bin/` as it was. Non-hybrid builds also publish the client zip in `binaries/`, get a
 * `build.json` in `bin/` as the real watchdog writes into their server archive (git/build-json.ts: the client's URL and
 * hash, the commit as version, the repository as fork id), and launches get `build.download_url`, `build.hash` and
 * `build.version` as cvars, so the URL and hash follow the zip actually published and a `BaseUrl` changed since.
 */
export function createGitProvider(
  ctx: ProviderContext,
  opts: { timeouts?: Partial<GitTimeouts> } = {},
): UpdateProvider {
  const { instance } = ctx;
  const updates = instance.settings.Updates;
  const timeouts = { ...DEFAULT_GIT_TIMEOUTS, ...opts.timeouts };
  const sourceDir = join(instance.dir, 'source');
  const binariesDir = join(instance.dir, 'binaries');
  const buildLog = join(instance.dir, 'logs', 'build.log');
  const clientCvars = createClientCvars({ key: instance.key, dir: instance.dir, publicBaseUrl: ctx.publicBaseUrl });
  const clientPattern = updates.ClientArtifact ?? DEFAULT_CLIENT_PATTERN;

  const repo = (sink?: WriteStream): RepoContext => ({
    instanceDir: instance.dir,
    sourceDir,
    remote: parseRemote(updates.BaseUrl),
    branch: checkBranch(updates.Branch),
    timeouts,
    log: ctx.log,
    sink,
    logHint: sink ? buildLog : undefined,
  });

  /** Client zips in binaries/ that the ClientArtifact pattern's file part matches. */
  const publishedClients = async (): Promise<string[]> => {
    const matcher = segmentMatcher(splitPattern(clientPattern, 'Updates.ClientArtifact').at(-1) as string);
    const entries = await readdir(binariesDir, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isFile() && !e.name.startsWith('.') && matcher.test(e.name)).map((e) => e.name);
  };

  async function build(current: string | null, signal: AbortSignal, sink: WriteStream): Promise<string> {
    const rid = hostPackagingRid(updates.Platform);
    ctx.progress({ phase: 'download' });
    const head = await syncCheckout(repo(sink), signal);
    const binExists = await lstat(join(instance.dir, 'bin')).then(
      () => true,
      () => false,
    );
    if (head === current && binExists) {
      ctx.log.info('the checkout is already at the installed commit; nothing to build', { revision: head });
      return head;
    }
    const plan = await planBuild(sourceDir, updates, rid);
    if (plan.kind !== 'command' && updates.BuildCommand?.trim()) {
      // Said, not refused: the engine's packaging wins (git/build.ts), and the operator should know theirs is unused.
      ctx.log.warn('Updates.BuildCommand is ignored: the repository is built with its engine packaging', {
        how: plan.kind,
      });
    }
    await removeStaleArtifacts(sourceDir, plan);
    ctx.log.info('building', {
      revision: head,
      platform: rid,
      hybridACZ: updates.HybridACZ,
      how: plan.kind,
      log: buildLog,
    });
    await runBuild({
      plan,
      sourceDir,
      instanceDir: instance.dir,
      signal,
      timeoutMs: timeouts.buildMs,
      sink,
      logHint: buildLog,
    });

    const server = await findArtifact(sourceDir, plan.serverPattern, 'Updates.Artifact');
    const client =
      plan.clientPattern === null ? null : await findArtifact(sourceDir, plan.clientPattern, 'Updates.ClientArtifact');
    // The client zip waits in the scratch folder (same file system, cleared at daemon start) until the server is in.
    let staged: string | null = null;
    try {
      let buildJson: BuildJson | null = null;
      if (client) {
        await mkdir(updateDir(instance.dir), { recursive: true });
        staged = join(updateDir(instance.dir), `client-${basename(client)}`);
        await rename(client, staged);
        buildJson = {
          download: clientDownloadUrl(ctx.publicBaseUrl, instance.key, basename(client)),
          hash: await clientZipHash(staged),
          version: head,
          engine_version: '',
          fork_id: forkIdOf(updates.BaseUrl),
        };
      }
      const onPhase = (phase: 'extract' | 'install') => ctx.progress({ phase });
      const newBin = await stageArchive({
        archive: server,
        instanceDir: instance.dir,
        runCommand: instance.settings.RunCommand,
        signal,
        onPhase,
      });
      try {
        if (buildJson) await writeBuildJson(newBin, buildJson);
      } catch (err) {
        await discardStaged(newBin);
        throw err;
      }
      await commitStaged(instance.dir, newBin, signal, onPhase);
    } catch (err) {
      if (staged) await rm(staged, { force: true });
      throw err;
    }
    await rm(server, { force: true });
    if (client && staged) {
      const name = basename(client);
      await mkdir(binariesDir, { recursive: true });
      for (const old of await publishedClients()) if (old !== name) await rm(join(binariesDir, old), { force: true });
      await rename(staged, join(binariesDir, name));
      ctx.log.info('client zip published', { file: join(binariesDir, name) });
    }
    return head;
  }

  return {
    type: 'Git',
    async check(current: string | null, signal: AbortSignal): Promise<UpdateCheck> {
      // ls-remote needs no checkout, only a folder to run in (the daemon normally made it already).
      await mkdir(instance.dir, { recursive: true });
      const head = await remoteHead(repo(), signal);
      return { available: head !== current, revision: head };
    },

    async apply(current: string | null, signal: AbortSignal): Promise<string> {
      await mkdir(join(instance.dir, 'logs'), { recursive: true });
      const sink = createWriteStream(buildLog, { flags: 'w' });
      const opened = new Promise<void>((resolve, reject) => sink.once('open', () => resolve()).once('error', reject));
      try {
        await opened;
      } catch (err) {
        throw new UpdateError(`cannot write the build log ${buildLog}`, { cause: err });
      }
      sink.write(`# update of instance ${instance.key} started ${new Date().toISOString()}\n`);
      try {
        const revision = await build(current, signal, sink);
        sink.write(`# installed ${revision}\n`);
        return revision;
      } catch (err) {
        sink.write(`# failed: ${err instanceof Error ? err.message : String(err)}\n`);
        throw err instanceof UpdateError
          ? err
          : new UpdateError(`the Git update of ${instance.key} failed`, { cause: err });
      } finally {
        await new Promise<void>((resolve) => sink.end(resolve));
      }
    },

    async launchCvars(revision: string | null): Promise<Array<[string, string]>> {
      if (updates.HybridACZ) return [];
      const names = await publishedClients();
      if (names.length !== 1) {
        throw new UpdateError(
          names.length === 0
            ? `no client zip matching Updates.ClientArtifact in ${binariesDir}; the next Git update builds and publishes it`
            : `${binariesDir} holds several client zips (${names.sort().join(', ')}); remove all but the current one`,
        );
      }
      const cvars = await clientCvars(names[0] as string);
      return revision === null ? cvars : [...cvars, ['build.version', revision]];
    },
  };
}
