#!/bin/sh
# Usage: xvfb_retry.sh XVFB_RUN COMMAND [ARGS...]
# Runs COMMAND under a fresh Xvfb display (Debian's ParaView renders through GLX only). Under load Xvfb
# now and then refuses pvpython's connection ("bad X server connection", pvpython aborts: status 134, or,
# when xvfb-run then also fails to clean up its temporary directory, another status). That failure, and
# only that one (recognised by its message), is retried with a new server, up to 5 times, 5 s apart (3 tries 2 s
# apart once failed while the other rank-tests ran); every other
# status, including a failed check (1), is returned at once.
xvfb_run=$1
shift
log=$(mktemp) || exit 1
rc=0
for attempt in 1 2 3 4 5; do
  "$xvfb_run" -a -s "-screen 0 1024x768x24" "$@" 2>"$log"
  rc=$?
  cat "$log" >&2
  if [ "$rc" -eq 0 ] || ! grep -q "bad X server connection" "$log"; then
    rm -f "$log"
    exit "$rc"
  fi
  echo "xvfb_retry.sh: the X server refused the connection (attempt $attempt of 5, status $rc)" >&2
  sleep 5
done
rm -f "$log"
exit "$rc"
