#!/bin/sh
# Makes serverB the active server directory, then asks the watchdog to restart the instance on it.
. "$(dirname "$0")/switch-lib.sh"
activate B A
