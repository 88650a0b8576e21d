#!/bin/sh
# The sanitizer reports of a GGLMBS_SANITIZE test run (tests/sanitizers/sanitizers.cmake).
#   reports.sh clear <dir>: empties <dir> before the tests run;
#   reports.sh check <dir>: fails, printing them, if the tests wrote any report into <dir>.
set -eu
mode=$1 dir=$2
case $mode in
  clear)
    rm -rf "$dir"
    mkdir -p "$dir"
    ;;
  check)
    found=0
    for f in "$dir"/*; do
      [ -f "$f" ] || continue
      found=$((found + 1))
      echo "==== $f" >&2
      cat "$f" >&2
    done
    if [ $found -gt 0 ]; then
      echo "test_sanitizer_reports: $found sanitizer report(s) in $dir (above)" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: reports.sh clear|check <dir>" >&2
    exit 2
    ;;
esac
