#!/bin/sh
# Usage: xvfb_retry.sh XVFB_RUN COMMAND [ARGS...]
# Runs COMMAND under a fresh Xvfb display (Debian's ParaView renders through GLX only). Under load Xvfb
# now and then refuses pvpython's connection ("bad X server connection", pvpython aborts: status 134).
# That failure, and only that one, is retried with a new server, up to 3 times; every other status,
# including a failed check (1), is returned at once.
xvfb_run=$1
shift
rc=0
for attempt in 1 2 3; do
  "$xvfb_run" -a -s "-screen 0 1024x768x24" "$@"
  rc=$?
  [ "$rc" -ne 134 ] && exit "$rc"
  echo "xvfb_retry.sh: the X server refused the connection (attempt $attempt of 3)" >&2
  sleep 1
done
exit "$rc"
