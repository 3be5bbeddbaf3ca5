import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { makeDir } from '../../make-dir.ts';
import { CREATE_NEW, clearForWrite } from '../../regular-file.ts';
import { fetchArchiveOffThread } from '../fetch/off-thread.ts';
import { DEFAULT_CLIENT_PATTERN, findArtifact, planBuild, removeStaleArtifacts, runBuild } from '../git/build.ts';
import { segmentMatcher, splitPattern } from '../git/glob.ts';
import { checkBranch, forkIdOf, parseRemote } from '../git/remote.ts';
import { DEFAULT_GIT_TIMEOUTS, type GitTimeouts, type RepoContext, remoteHead, syncCheckout } from '../git/repo.ts';
import { limitsOf } from '../install/disk-guard.ts';
import { exists, stageBuild, updateDir } from '../install/install.ts';
import { stagedProvider } from '../install/staged-build.ts';
import { hostPackagingRid } from '../platform.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { clientDownloadUrl, clientZipHash, createClientCvars } from './local-client.ts';

/**
 * `UpdateType: Git` (the real watchdog's `UpdateProviderGit.cs`): a check that finds a new commit of `Updates.Branch`
 * fetches it into `<instance>/source`, builds it (`logs/build.log`) and stages it, so a failed build is a failed check.
 * Non-hybrid builds also publish the client zip in `binaries/`, get a `build.json` and launch with `build.*` cvars
 * that follow the zip actually published.
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
  /** The staged build's client zip, waiting in `.update/` for its server's install. */
  let stagedClient: { head: string; path: string; name: string } | null = null;

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

  /**
   * Fetches and builds `head` and stages its server archive (with build.json) for `commitStaged`, the client zip
   * kept in `.update/`; `bin/` and `binaries/` are not touched, so this runs while the server plays.
   */
  async function prepare(head: string, signal: AbortSignal): Promise<string> {
    return withBuildLog({ path: buildLog, key: instance.key, head }, async (sink) => {
      const rid = hostPackagingRid(updates.Platform);
      ctx.progress({ phase: 'download' });
      const synced = await syncCheckout(repo(sink), signal);
      if (synced !== head) {
        throw new UpdateError(
          `branch ${repo().branch} moved to ${synced} while ${head} was being fetched; the next check builds the newest commit`,
        );
      }
      const plan = await planBuild(sourceDir, updates, rid);
      if (plan.kind !== 'command' && updates.BuildCommand?.trim()) {
        // The engine's packaging wins (git/build.ts); the operator should know theirs is unused.
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
      await runBuild(plan, repo(sink), signal);

      const server = await findArtifact(sourceDir, plan.serverPattern, 'Updates.Artifact');
      const client =
        plan.clientPattern === null
          ? null
          : await findArtifact(sourceDir, plan.clientPattern, 'Updates.ClientArtifact');
      if (stagedClient) {
        await rm(stagedClient.path, { force: true });
        stagedClient = null;
      }
      const name = client === null ? null : basename(client);
      const kept = name === null ? null : { path: join(updateDir(instance.dir), `client-${name}`), name };
      try {
        if (client !== null && kept !== null) {
          await makeDir(updateDir(instance.dir));
          await rename(client, kept.path);
        }
        const stage = { instanceDir: instance.dir, runCommand: instance.settings.RunCommand, signal };
        const newBin = await stageBuild(stage, async (staging) => {
          ctx.progress({ phase: 'extract' });
          const job = { archive: server, staging, limits: limitsOf(instance.settings.Updates) };
          await fetchArchiveOffThread(job, signal, { onProgress: () => {}, onDownloaded: () => {} });
          if (kept === null) return;
          // The engine fills each `build.*` cvar still empty from build.json when it starts, as the real watchdog
          // writes it into a non-hybrid Git build: so /info learns its version and fork id. engine_version stays
          // empty, as there: the engine reports its own.
          const path = join(staging, 'build.json');
          const build = {
            download: clientDownloadUrl(ctx.publicBaseUrl, instance.key, kept.name),
            hash: await clientZipHash(kept.path),
            version: head,
            engine_version: '',
            fork_id: forkIdOf(updates.BaseUrl),
          };
          await writeFile(path, `${JSON.stringify(build)}\n`).catch((err: unknown) => {
            throw new UpdateError(`cannot write the build information ${path}; bin/ was left as it was`, {
              cause: err,
            });
          });
        });
        await rm(server, { force: true });
        if (kept) stagedClient = { head, ...kept };
        return newBin;
      } catch (err) {
        if (kept) await rm(kept.path, { force: true });
        throw err;
      }
    });
  }

  /** Moves the client zip of the build of `head`, now installed, into binaries/ in place of the old one. */
  async function publishClient(head: string): Promise<void> {
    const kept = stagedClient;
    if (kept?.head !== head) return;
    stagedClient = null;
    await makeDir(binariesDir);
    for (const old of await publishedClients())
      if (old !== kept.name) await rm(join(binariesDir, old), { force: true });
    await rename(kept.path, join(binariesDir, kept.name));
    ctx.log.info('client zip published', { file: join(binariesDir, kept.name) });
  }

  return {
    ...stagedProvider(ctx, {
      type: 'Git',
      what: 'build',
      newest: async (signal) => {
        await makeDir(instance.dir);
        const head = await remoteHead(repo(), signal);
        const stage = async () => ({ id: head, make: () => prepare(head, signal), fields: { revision: head } });
        return { revision: head, stage };
      },
      installed: () => exists(join(instance.dir, 'bin')),
      afterInstall: publishClient,
    }),

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

/** Runs `work` with the build log opened afresh (the last build's); a failure is written at its end. */
async function withBuildLog<T>(
  log: { path: string; key: string; head: string },
  work: (sink: WriteStream) => Promise<T>,
): Promise<T> {
  await makeDir(dirname(log.path));
  await clearForWrite(log.path);
  const sink = createWriteStream(log.path, { flags: CREATE_NEW });
  await once(sink, 'open').catch((err: unknown) => {
    throw new UpdateError(`cannot write the build log ${log.path}`, { cause: err });
  });
  sink.write(`# build of ${log.head} for instance ${log.key} started ${new Date().toISOString()}\n`);
  try {
    const result = await work(sink);
    sink.write(`# staged ${log.head}\n`);
    return result;
  } catch (err) {
    sink.write(`# failed: ${err instanceof Error ? err.message : String(err)}\n`);
    throw err instanceof UpdateError ? err : new UpdateError(`the Git update of ${log.key} failed`, { cause: err });
  } finally {
    await new Promise<void>((resolve) => sink.end(resolve));
  }
}
