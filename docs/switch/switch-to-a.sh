#!/bin/sh
# Makes serverA the active server directory, then asks the watchdog to restart the instance on it.
. "$(dirname "$0")/switch-lib.sh"
activate A B
