#!/usr/bin/env bash
# A local stand-in for node:20-bookworm-slim, for machines that cannot pull it: an image holding this machine's
# node and npm, exactly the shared libraries they (and the few tools below) load, /bin/sh, mkdir and chown for
# the Dockerfile's RUN lines, user and group `node` (1000:1000) as in the official image, CA certificates and a
# 1777 /tmp. buildah gives each RUN the host's /etc/resolv.conf and /etc/hosts and proxy variables, and
# deploy/image.sh its NODE_EXTRA_CA_CERTS, so npm inside the build reaches the registry the way the host does. Copying the host's files takes seconds and ~110 MB; a debootstrap'd
# bookworm would take minutes and need the Debian mirror as well as the npm registry.
#
# Usage: deploy/image-base.sh   prints the image's name (localhost/watchdog-node-base:<node version>) on stdout;
# reuses it when it exists, since the tag is the node version. Progress goes to stderr. Needs root and buildah.
set -euo pipefail

say() { printf 'image-base: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

command -v buildah >/dev/null || die 'buildah is not installed (apt-get install buildah)'
node_bin=$(command -v node) || die 'node is not on PATH: the base image carries this machine'"'"'s node'
node_bin=$(readlink -f "$node_bin")
version=$(node -p 'process.versions.node')
name="localhost/watchdog-node-base:$version"

if buildah inspect --type image "$name" >/dev/null 2>&1; then
  say "reusing $name (this machine's node is $version)"
  echo "$name"
  exit 0
fi

npm_dir=$(readlink -f "$(dirname "$node_bin")/../lib/node_modules/npm")
[ -f "$npm_dir/bin/npm-cli.js" ] || die "npm is not beside node ($npm_dir/bin/npm-cli.js): the build stage runs npm ci"

ctr=''
mnt=''
cleanup() {
  if [ -n "$ctr" ]; then
    buildah umount "$ctr" >/dev/null 2>&1 || true
    buildah rm "$ctr" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

say "making $name from this machine's node $version ($node_bin) and npm ($npm_dir)"
ctr=$(buildah from scratch)
mnt=$(buildah mount "$ctr")

# Debian 12 merges /bin, /lib and /sbin into /usr; ldd names libraries under /lib, so the same links are made.
mkdir -p "$mnt"/usr/{bin,sbin,lib,lib64,local/bin,local/lib/node_modules} "$mnt"/{etc/ssl/certs,root,home/node,tmp}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$mnt/$d"; done
chmod 1777 "$mnt/tmp"
chmod 700 "$mnt/root"
chown 1000:1000 "$mnt/home/node"

# The programs, at the paths the official image has them (node and npm under /usr/local).
cp "$node_bin" "$mnt/usr/local/bin/node"
cp -a "$npm_dir" "$mnt/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
# sh runs every RUN line and npm's scripts; env is npm's shebang (#!/usr/bin/env node); mkdir and chown are the
# Dockerfile's.
tools=()
for t in sh env mkdir chown; do
  p=$(command -v "$t") || die "$t is not on PATH"
  tools+=("$(readlink -f "$p")")
  cp "$(readlink -f "$p")" "$mnt/usr/bin/$(basename "$(readlink -f "$p")")"
done
[ -e "$mnt/usr/bin/sh" ] || ln -s "$(basename "$(readlink -f "$(command -v sh)")")" "$mnt/usr/bin/sh"

# Exactly the libraries those programs load, and the dynamic loader, at the paths ldd resolves them to.
libs=$(ldd "$node_bin" "${tools[@]}" | awk '/=> \//{print $3} /^[ \t]*\/[^ ]+ \(/{print $1}' | sort -u)
[ -n "$libs" ] || die "ldd found no libraries for $node_bin"
for lib in $libs; do
  mkdir -p "$mnt$(dirname "$lib")"
  cp -L "$lib" "$mnt$lib"
done

cat >"$mnt/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000::/home/node:/bin/sh
EOF
cat >"$mnt/etc/group" <<'EOF'
root:x:0:
node:x:1000:
EOF
cat >"$mnt/etc/nsswitch.conf" <<'EOF'
passwd: files
group:  files
hosts:  files dns
EOF
cp -L /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/ca-certificates.crt" 2>/dev/null ||
  say 'no /etc/ssl/certs/ca-certificates.crt here: node uses its own CA store, tools that read that file will not'
# Where the host's node trusts an extra CA (a TLS-intercepting proxy's), the same file at the same path, so the
# NODE_EXTRA_CA_CERTS build argument deploy/image.sh passes names a file that exists in the build stages.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ] && [ ! -e "$mnt$NODE_EXTRA_CA_CERTS" ]; then
  mkdir -p "$mnt$(dirname "$NODE_EXTRA_CA_CERTS")"
  cp -L "$NODE_EXTRA_CA_CERTS" "$mnt$NODE_EXTRA_CA_CERTS"
fi

buildah config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="$version" \
  --cmd '["node"]' \
  --label org.opencontainers.image.description="node $version and npm from the machine that built it (deploy/image-base.sh)" \
  "$ctr"
buildah umount "$ctr" >/dev/null
buildah commit --quiet --rm "$ctr" "$name" >/dev/null
ctr=''
say "made $name ($(buildah images --format '{{.Size}}' "$name"))"
echo "$name"
