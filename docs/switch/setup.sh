#!/bin/sh
# Prepares an instance folder for the do-it-yourself two-directory update scheme (docs/diy-updates.md):
#   serverA/, serverB/   the two server directories (A starts active)
#   currentServer        -> the active directory's server executable (the instance's RunCommand)
#   inactiveBin          -> the inactive directory (unpack the next build here)
#   switch               -> the script that makes the inactive directory active and tells the watchdog
#
# Usage: setup.sh <instanceDir>
# Env:   SERVER_PROGRAM  the server executable's name inside serverA/ and serverB/ (default Robust.Server)
set -eu

if [ $# -ne 1 ]; then
  echo "usage: $0 <instanceDir>" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd -P)
mkdir -p "$1"
dir=$(cd "$1" && pwd -P)
program=${SERVER_PROGRAM:-Robust.Server}
case $program in
  */* | .* | '') echo "setup: SERVER_PROGRAM must be a plain file name, got '$program'" >&2; exit 2 ;;
esac

mkdir -p "$dir/serverA" "$dir/serverB"
for f in switch-lib.sh switch-to-a.sh switch-to-b.sh; do
  cp "$here/$f" "$dir/$f"
  chmod 755 "$dir/$f"
done
# Read by the switch scripts; values already in the environment win. The token is never stored here.
printf ': "${SERVER_PROGRAM:=%s}"\n' "$program" > "$dir/switch.conf"

cd "$dir"
if [ -L currentServer ] || [ -e currentServer ]; then
  echo "setup: $dir is already set up; its links were left as they are"
else
  ln -s "serverA/$program" currentServer
  ln -s serverB inactiveBin
  ln -s switch-to-b.sh switch
  echo "setup: $dir is ready: serverA is active, serverB is inactiveBin"
fi

cat <<MSG

Next:
  1. Unpack the server into $dir/serverA/ (so that serverA/$program exists and is executable).
  2. In appsettings.yml, for this instance:
       UpdateType: Dummy
       RunCommand: currentServer
  3. For each new build: empty inactiveBin/, unpack the build into it, then run
       WATCHDOG_URL=http://localhost:5000 WATCHDOG_KEY=<key> WATCHDOG_TOKEN=<ApiToken> $dir/switch
MSG
