# shellcheck shell=sh
# Shared by switch-to-a.sh and switch-to-b.sh (docs/diy-updates.md); sourced, not run.
#
# Env: WATCHDOG_URL    the watchdog's address, e.g. http://localhost:5000
#      WATCHDOG_KEY    the instance key
#      WATCHDOG_TOKEN  the instance's ApiToken (or WATCHDOG_TOKEN_FILE: a file holding it)
#      SERVER_PROGRAM  the server executable's name (default: what setup.sh recorded in switch.conf)
set -eu

# The scripts run from the instance folder (setup.sh copies them there; `switch` is a link beside them).
INSTANCE_DIR=$(cd "$(dirname "$0")" && pwd -P)
if [ ! -f "$INSTANCE_DIR/switch.conf" ]; then
  echo "switch: $INSTANCE_DIR has no switch.conf; run docs/switch/setup.sh <instanceDir> and use the copies it makes" >&2
  exit 2
fi
. "$INSTANCE_DIR/switch.conf"

fail() {
  echo "switch: $*" >&2
  exit 1
}

# Replaces a link in one step where mv -T exists (GNU), so nothing ever sees it missing.
relink() {
  ln -s "$1" "$2.new.$$"
  if ! mv -T "$2.new.$$" "$2" 2>/dev/null; then
    rm -f "$2.new.$$"
    ln -sfn "$1" "$2"
  fi
}

require_settings() {
  [ -n "${WATCHDOG_URL:-}" ] || fail "set WATCHDOG_URL to the watchdog's address (e.g. http://localhost:5000); nothing was changed"
  [ -n "${WATCHDOG_KEY:-}" ] || fail "set WATCHDOG_KEY to the instance key; nothing was changed"
  if [ -z "${WATCHDOG_TOKEN:-}" ] && [ -n "${WATCHDOG_TOKEN_FILE:-}" ]; then
    WATCHDOG_TOKEN=$(cat "$WATCHDOG_TOKEN_FILE")
  fi
  [ -n "${WATCHDOG_TOKEN:-}" ] || fail "set WATCHDOG_TOKEN (or WATCHDOG_TOKEN_FILE) to the instance's ApiToken; nothing was changed"
}

# curl config strings are double-quoted with backslash escapes.
curl_quote() {
  printf '%s' "$1" | sed 's/[\\"]/\\&/g'
}

# POST /instances/<key>/update with Basic <key>:<token>. The credentials go to curl on stdin (--config -),
# never in its arguments, where `ps` would show them to every user.
notify_watchdog() {
  user=$(curl_quote "$WATCHDOG_KEY:$WATCHDOG_TOKEN")
  url="${WATCHDOG_URL%/}/instances/$WATCHDOG_KEY/update"
  if ! curl -fsS -X POST --max-time 30 --config - "$url" >/dev/null <<CURLCONFIG
user = "$user"
CURLCONFIG
  then
    fail "the links were switched, but telling the watchdog at $url failed; run 'watchdog update $WATCHDOG_KEY' (or this script) again"
  fi
}

# activate NEW OLD: makes server<NEW> active and server<OLD> inactive, then asks for the update (a restart).
activate() {
  new=server$1
  old=server$2
  next=switch-to-$(printf '%s' "$2" | tr AB ab).sh
  require_settings
  cd "$INSTANCE_DIR"
  if [ ! -f "$new/$SERVER_PROGRAM" ] || [ ! -x "$new/$SERVER_PROGRAM" ]; then
    fail "$INSTANCE_DIR/$new/$SERVER_PROGRAM is missing or not executable: unpack the new server into inactiveBin/ first; nothing was changed"
  fi
  relink "$new/$SERVER_PROGRAM" currentServer
  relink "$old" inactiveBin
  relink "$next" switch
  echo "switch: $new is now active ($old is inactiveBin); asking the watchdog to update $WATCHDOG_KEY"
  notify_watchdog
}
