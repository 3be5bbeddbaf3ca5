#!/usr/bin/env bash
# Builds the real .NET watchdog (space-wizards/SS14.Watchdog) from the unmodified snapshot in shared/peers,
# with the patch kept beside this script, into a cache folder outside the project tree, and prints ONLY the
# absolute path of the runnable watchdog (its apphost; `dotnet <that path>.dll` works too) on stdout.
# Everything else goes to stderr. A second run with the same inputs prints the cached path at once.
#
#   bench/peers/ss14-watchdog/build.sh [SNAPSHOT_DIR]
#
# SNAPSHOT_DIR: first argument, else $SS14_WATCHDOG_SRC, else <repo root>/../shared/peers/SS14.Watchdog.
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/gsw-peers/ss14-watchdog/<hash>, where <hash> covers the snapshot's
# files (paths and contents), the patch, this script and the .NET SDK version. See README.md beside this file.
set -euo pipefail

export DOTNET_CLI_TELEMETRY_OPTOUT=1
export DOTNET_NOLOGO=1
export DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# No MSBuild/compiler server may outlive the build: it would hold our stderr open (a caller that waits for
# the pipe to close would hang for minutes) and keep using CPU and memory on a shared 2-core machine.
export DOTNET_CLI_USE_MSBUILD_SERVER=0
export MSBUILDDISABLENODEREUSE=1
export UseSharedCompilation=false

log() { printf 'ss14-watchdog build: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd "$here/../../.." && pwd -P)"
patch_file="$here/ss14-watchdog.patch"

src="${1:-${SS14_WATCHDOG_SRC:-$repo_root/../shared/peers/SS14.Watchdog}}"
[[ -d "$src" ]] || die "snapshot folder not found: $src (pass it as the first argument or in SS14_WATCHDOG_SRC)"
src="$(cd "$src" && pwd -P)"
[[ -f "$src/SS14.Watchdog/SS14.Watchdog.csproj" ]] || die "not an SS14.Watchdog snapshot: $src"
[[ -f "$patch_file" ]] || die "patch missing: $patch_file"
command -v dotnet >/dev/null || die "dotnet not on PATH (needs the .NET 10 SDK)"
command -v patch >/dev/null || die "'patch' not on PATH (Debian package: patch)"
command -v flock >/dev/null || die "'flock' not on PATH (Debian package: util-linux)"

# The key of the cache: every file of the snapshot (relative path and content; build outputs and VCS folders
# excluded), the patch, this script and the SDK version.
sdk_version="$(dotnet --version </dev/null 2>/dev/null)" || die "'dotnet --version' failed"
hash="$(
    {
        printf 'sdk %s\n' "$sdk_version"
        printf 'patch %s\n' "$(sha256sum <"$patch_file" | cut -d' ' -f1)"
        printf 'script %s\n' "$(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)"
        (cd "$src" && find . \( -name .git -o -name bin -o -name obj \) -prune -o -type f -print0 \
            | LC_ALL=C sort -z | xargs -0 -r sha256sum)
    } | sha256sum | cut -c1-16
)"

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/gsw-peers/ss14-watchdog"
dest="$cache_root/$hash"
exe="$dest/publish/SS14.Watchdog"

case "$dest/" in
    "$repo_root"/*) die "cache folder $dest is inside the project tree; set XDG_CACHE_HOME elsewhere" ;;
esac

done_already() { [[ -f "$dest/.complete" && -x "$exe" && -f "$exe.dll" ]]; }

if done_already; then
    log "cached build $hash"
    printf '%s\n' "$exe"
    exit 0
fi

mkdir -p "$cache_root"
# One build per hash at a time: a second concurrent run waits here, then finds the finished build.
exec 9>"$cache_root/$hash.lock"
if ! flock -n 9; then
    log "another build of $hash is running; waiting for it"
    flock 9
fi

if done_already; then
    log "cached build $hash (built by a concurrent run)"
    printf '%s\n' "$exe"
    exit 0
fi

# Build in a temporary folder beside the final one, then rename it into place, so that an interrupted
# build never leaves a folder that looks finished.
rm -rf "$dest"
tmp="$(mktemp -d "$cache_root/.tmp.$hash.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

log "copying $src"
mkdir -p "$tmp/src"
(cd "$src" && tar -c --exclude=.git --exclude=bin --exclude=obj .) | tar -x -C "$tmp/src"
chmod -R u+w "$tmp/src"

log "applying $(basename "$patch_file")"
(cd "$tmp/src" && patch -p1 --forward --batch --no-backup-if-mismatch --quiet) <"$patch_file" >&2 \
    || die "the patch does not apply to $src"

build_log="$tmp/build.log"
log "dotnet publish (Release, framework-dependent; SDK $sdk_version); log: $dest/build.log"
if ! (cd "$tmp/src" && dotnet publish SS14.Watchdog/SS14.Watchdog.csproj \
        -c Release -o "$tmp/publish" -nologo -nodeReuse:false -p:UseSharedCompilation=false \
        -p:ContinuousIntegrationBuild=true -p:PathMap="$tmp/src=/_/" \
        </dev/null >"$build_log" 2>&1); then
    tail -n 40 "$build_log" >&2
    die "dotnet publish failed (full log: $build_log, kept until this script exits)"
fi
[[ -x "$tmp/publish/SS14.Watchdog" && -f "$tmp/publish/SS14.Watchdog.dll" ]] \
    || die "dotnet publish made no SS14.Watchdog apphost/dll in $tmp/publish"
grep -E 'warning NU1603' "$build_log" | sed -E 's/^[^:]*: //' | sort -u | sed 's/^/  /' >&2 || true

printf 'snapshot %s\nsdk %s\nbuilt %s\nseconds %s\n' "$src" "$sdk_version" "$(date -u +%FT%TZ)" \
    "$((SECONDS - start))" >"$tmp/.complete"
mv -T "$tmp" "$dest"
trap - EXIT
log "built $hash in $((SECONDS - start)) s"
printf '%s\n' "$exe"
