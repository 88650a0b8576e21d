#!/bin/bash
# Builds the libFuzzer targets (clang, ASan + UBSan, coverage) in build-fuzz and runs each for a given
# time on one core: fuzz_yaml (YAML reader, model builder, stepper set-up) and fuzz_gmsh (Gmsh reader).
#
#   scripts/fuzz.sh [--max-len bytes] [seconds per target, default 600] [target ...]
#
# Inputs are up to --max-len bytes (or $FUZZ_MAX_LEN; default 1 MiB = 1048576) for both targets.
# Seeds: inputs/, tests/inputs/{good,bad,fuzz}, meshes/, tests/inputs/mesh, tests/inputs/bad/mesh, and large
# inputs that tests/fuzz/make_large_seeds.py writes to build-fuzz/seeds-large/{yaml,gmsh} (128 KiB and
# --max-len bytes each; libFuzzer seldom grows an input that far by mutation). The
# growing corpus is kept in build-fuzz/corpus/<target> (later runs continue from it); anything found goes
# to build-fuzz/findings/<target>/ (crash-*, leak-*, timeout-*, oom-*) and the script exits non-zero.
# Each run's log is build-fuzz/<target>.log; its status lines "#<executions>: cov: .. ft: .. exec/s: .."
# give the totals.
# A finding is reproduced with: GGLMBS_SOURCE_DIR=$PWD build-fuzz/tests/fuzz/<target> <file>.
# Needs clang and libclang-rt-14-dev (Debian). docs/robustness.md has the results.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
max_len=${FUZZ_MAX_LEN:-1048576}
if [ "${1:-}" = --max-len ]; then
  max_len=${2:?fuzz.sh: --max-len needs a number of bytes}
  shift 2
fi
case $max_len in ''|*[!0-9]*) echo "fuzz.sh: the maximum input length must be a number of bytes, got '$max_len'" >&2; exit 2 ;; esac
seconds=${1:-600}
shift || true
targets=${*:-"fuzz_yaml fuzz_gmsh"}
build=$here/build-fuzz
export GGLMBS_SOURCE_DIR=$here OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self

mkdir -p "$build"
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER=clang -DGGLMBS_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build/cmake.log" 2>&1 || { cat "$build/cmake.log"; exit 1; }
cmake --build "$build" -j2 --target $targets > "$build/build.log" 2>&1 || { tail -40 "$build/build.log"; exit 1; }
large=$build/seeds-large
rm -rf "$large"
sizes=$max_len
[ "$max_len" -gt 131072 ] && sizes="131072,$max_len"
python3 "$here/tests/fuzz/make_large_seeds.py" --sizes "$sizes" "$large"

status=0
for t in $targets; do
  case $t in
    fuzz_yaml) seeds="$here/inputs $here/tests/inputs/good $here/tests/inputs/bad $here/tests/inputs/app $here/tests/inputs/fuzz/yaml $large/yaml"; dict=yaml.dict ;;
    fuzz_gmsh) seeds="$here/meshes $here/tests/inputs/mesh $here/tests/inputs/bad/mesh $here/tests/inputs/fuzz/gmsh $large/gmsh"; dict=gmsh.dict ;;
    *) echo "fuzz.sh: unknown target $t" >&2; exit 2 ;;
  esac
  corpus=$build/corpus/$t findings=$build/findings/$t
  mkdir -p "$corpus" "$findings"
  existing=""
  for d in $seeds; do [ -d "$d" ] && existing="$existing $d"; done
  # -timeout: an input taking seconds is a finding; -rss_limit_mb: so is one that needs more memory
  # than the memory limit the target sets (-mbs_memory_limit 128MiB) lets through.
  # -fork=1: one child process at a time (one core), restarted after a finding, so that one run collects
  # all of them; the parent's status lines count executions over all children.
  (cd "$findings" && "$build/tests/fuzz/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -dict="$here/tests/fuzz/$dict" \
      -artifact_prefix="$findings/" "$corpus" $existing) > "$build/$t.log" 2>&1 || status=1
  grep -E "^#[0-9]+: cov" "$build/$t.log" | tail -n 1
  grep -h "FUZZ FINDING\|^SUMMARY" "$build/$t.log" | sort | uniq -c
  if ls "$findings" | grep -q .; then status=1; ls "$findings"; fi
done
[ $status = 0 ] && echo "fuzz.sh: no findings" || echo "fuzz.sh: findings in $build/findings (see the logs $build/fuzz_*.log)"
exit $status
