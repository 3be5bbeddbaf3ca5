#!/usr/bin/env bash
# Builds the Dockerfile into a local image with buildah, where no container engine runs: `--isolation chroot`
# needs neither a daemon nor a runtime's namespaces and cgroups (podman's crun cannot run containers on machines
# that refuse its setrlimit). The base image is, in order: $NODE_IMAGE if set; node:20-bookworm-slim if it is
# already stored or can be pulled within $WATCHDOG_IMAGE_PULL_SECONDS (20; 0 skips trying); else the local
# stand-in deploy/image-base.sh makes from this machine's node. With a registry, `docker build .` is the same.
#
# Usage: deploy/image.sh [--tag NAME] [--no-pull]     (npm run image)
#   --tag NAME   the image's name (default localhost/game-server-watchdog:latest)
#   --no-pull    do not try the registry for node:20-bookworm-slim (same as WATCHDOG_IMAGE_PULL_SECONDS=0)
# No layer cache by default, so a build leaves no unnamed images behind, only the two it names (the base and
# --tag); WATCHDOG_IMAGE_LAYERS=1 caches each step (--layers) for quicker rebuilds after a source change. Needs
# root (buildah's storage) and network access to the npm registry, which every RUN shares with the host. Bounded: $WATCHDOG_IMAGE_BUILD_SECONDS (1200).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'image: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

tag=localhost/game-server-watchdog:latest
pull_seconds=${WATCHDOG_IMAGE_PULL_SECONDS:-20}
build_seconds=${WATCHDOG_IMAGE_BUILD_SECONDS:-1200}
while [ $# -gt 0 ]; do
  case "$1" in
  --tag)
    [ $# -ge 2 ] || die '--tag needs a name'
    tag=$2
    shift 2
    ;;
  --no-pull)
    pull_seconds=0
    shift
    ;;
  *) die "unknown argument $1 (usage: deploy/image.sh [--tag NAME] [--no-pull])" ;;
  esac
done

command -v buildah >/dev/null || die 'buildah is not installed (apt-get install buildah)'
[ "$(id -u)" = 0 ] || die 'run as root: buildah keeps its images in /var/lib/containers and chroot builds need root'

official=docker.io/library/node:20-bookworm-slim
base=${NODE_IMAGE:-}
if [ -z "$base" ] && buildah inspect --type image "$official" >/dev/null 2>&1; then
  base=$official
  say "base image: $official (stored)"
fi
if [ -z "$base" ] && [ "$pull_seconds" -gt 0 ]; then
  say "trying to pull $official (at most ${pull_seconds}s)"
  if timeout "$pull_seconds" buildah pull --quiet "$official" >/dev/null 2>&1; then
    base=$official
  else
    say "cannot pull $official: making the base image from this machine's node"
  fi
fi
if [ -z "$base" ]; then
  base=$(timeout 300 deploy/image-base.sh) || die 'deploy/image-base.sh failed (see above)'
fi

# A TLS-intercepting proxy between this machine and the registry: the build's npm trusts the CA the host's node
# does (the local base image holds that file at the same path). buildah passes *_proxy variables by itself.
ca_args=()
[ -n "${NODE_EXTRA_CA_CERTS:-}" ] && ca_args=(--build-arg NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS")
layers=false
[ "${WATCHDOG_IMAGE_LAYERS:-0}" = 1 ] && layers=true
say "building $tag FROM $base (buildah bud --isolation chroot, at most ${build_seconds}s)"
started=$SECONDS
# --pull=never: the base is stored by now, and a localhost/ name has no registry to ask. --format docker: the
# OCI format has no HEALTHCHECK, and buildah would drop it. --force-rm: a failed build leaves no containers.
if ! timeout "$build_seconds" buildah bud --isolation chroot --network host --layers="$layers" --pull=never \
  --format docker --force-rm --build-arg NODE_IMAGE="$base" "${ca_args[@]}" --tag "$tag" --file Dockerfile . >&2; then
  die "buildah bud failed or took over ${build_seconds}s (its output is above)"
fi
say "built $tag in $((SECONDS - started))s: $(buildah images --format '{{.Size}}' "$tag")"
echo "$tag"
