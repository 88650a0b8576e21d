#!/usr/bin/env bash
# Every C source and header is laid out as .clang-format says (clang-format 14, Debian 12's), and no line
# is longer than 120 characters (string literals too: split them, C joins adjacent literals).
# Usage: check_format.sh SOURCE_DIR [CLANG_FORMAT]
set -u
src=$1
cf=${2:-clang-format}
cd "$src" || exit 1
files=$(find include src tests examples -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "check_format: no C files found under $src" >&2; exit 1; }
status=0
# shellcheck disable=SC2086
if ! "$cf" --dry-run --Werror $files 2>/tmp/check_format.$$; then
  echo "check_format: files not formatted as .clang-format says (fix: $cf -i FILE):" >&2
  grep -o '^[^:]*\.[ch]' /tmp/check_format.$$ | sort -u >&2
  status=1
fi
rm -f /tmp/check_format.$$
# shellcheck disable=SC2086
long=$(awk 'length > 120 { printf "%s:%d: %d characters\n", FILENAME, FNR, length }' $files)
if [ -n "$long" ]; then
  echo "check_format: lines over 120 characters:" >&2
  echo "$long" >&2
  status=1
fi
exit $status
