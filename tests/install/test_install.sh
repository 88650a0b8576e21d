#!/usr/bin/env bash
# The installed package end to end: installs the build tree into a fresh prefix, checks the installed
# files, runs the installed program (its RPATH), builds examples/coupling.c against the installed
# package twice (CMake find_package, and pkg-config through examples/Makefile), runs both builds (one
# also on 2 ranks) and checks what they print: the observed order of the free particle, the discrete
# work-energy balance, the constraint residuals, and that the two builds print the same numbers.
# Silent when it passes; on failure the scratch directory is kept and named.
#
# Usage: test_install.sh <cmake> <build dir> <source dir> <C compiler> <pkg-config> <mpiexec> <make>
set -euo pipefail

cmake=$1 build=$2 source=$3 cc=$4 pkgconfig=$5 mpiexec=$6 make=$7
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gglmbs_test_install.XXXXXX")
prefix=$scratch/prefix
passed=0
trap 'if [ $passed = 1 ]; then rm -rf "$scratch"; else echo "test_install: files kept in $scratch" >&2; fi' EXIT

fail() {
  echo "test_install: $*" >&2
  exit 1
}

# Runs a command with its output in $scratch/<log>.log; on failure shows the end of the log.
run() {
  local log=$scratch/$1.log
  shift
  if ! "$@" > "$log" 2>&1; then
    tail -n 30 "$log" >&2
    fail "failed: $* (log: $log)"
  fi
}

# The binaries must find libgglmbs through their RPATH, never through the environment.
unset LD_LIBRARY_PATH

run install "$cmake" --install "$build" --prefix "$prefix"

# -- the installed tree
for header in "$source"/include/gglmbs/*.h; do
  [ -f "$prefix/include/gglmbs/$(basename "$header")" ] || fail "header $(basename "$header") is not installed in $prefix/include/gglmbs"
done
# private headers only where scheme authors find them (gglmbs/schemes.h), under include/gglmbs/private
if find "$prefix/include" -name '*impl.h' -not -path "$prefix/include/gglmbs/private/*" | grep . > /dev/null; then fail "private headers installed outside include/gglmbs/private: $(find "$prefix/include" -name '*impl.h' -not -path "$prefix/include/gglmbs/private/*")"; fi
for header in stepper/stepperimpl.h model/operators.h model/modelimpl.h; do
  [ -f "$prefix/include/gglmbs/private/$header" ] || fail "the scheme-author header $header is not installed in $prefix/include/gglmbs/private"
done
pcfiles=$(find "$prefix" -name gglmbs.pc)
[ "$(echo "$pcfiles" | grep -c .)" = 1 ] || fail "expected one gglmbs.pc under $prefix, found: '$pcfiles'"
pcdir=$(dirname "$pcfiles")
libdir=$(dirname "$pcdir")
for f in gglmbsConfig.cmake gglmbsConfigVersion.cmake gglmbsTargets.cmake; do
  [ -f "$libdir/cmake/gglmbs/$f" ] || fail "$libdir/cmake/gglmbs/$f is not installed"
done
compgen -G "$libdir/libgglmbs.so*" > /dev/null || [ -f "$libdir/libgglmbs.a" ] || fail "no libgglmbs in $libdir"
[ -x "$prefix/bin/gglmbs" ] || fail "the program is not installed as $prefix/bin/gglmbs"
if [ -f "$source/scripts/gglmbs-plot" ]; then
  [ -x "$prefix/bin/gglmbs-plot" ] || fail "scripts/gglmbs-plot is not installed as an executable $prefix/bin/gglmbs-plot"
fi

# -- gglmbs.pc: valid, relocatable, and pointing into the prefix
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
run pc_validate "$pkgconfig" --validate gglmbs
run pc_flags "$pkgconfig" --cflags --libs gglmbs
pc_includedir=$(cd "$("$pkgconfig" --variable=includedir gglmbs)" && pwd -P) || fail "gglmbs.pc: includedir does not exist"
pc_libdir=$(cd "$("$pkgconfig" --variable=libdir gglmbs)" && pwd -P) || fail "gglmbs.pc: libdir does not exist"
[ "$pc_includedir" = "$(cd "$prefix/include" && pwd -P)" ] || fail "gglmbs.pc: includedir $pc_includedir is not $prefix/include"
[ "$pc_libdir" = "$(cd "$libdir" && pwd -P)" ] || fail "gglmbs.pc: libdir $pc_libdir is not $libdir"

# -- the installed program finds the installed library through its RPATH
ldd "$prefix/bin/gglmbs" | grep "libgglmbs.*=> $prefix/" > /dev/null || fail "the installed program does not load libgglmbs from $prefix: $(ldd "$prefix/bin/gglmbs" | grep gglmbs)"
run program "$prefix/bin/gglmbs" -i "$source/inputs/pendulum3d.yaml" -mbs_t_end 0.05 -mbs_output_dir "$scratch/program"
[ -s "$scratch/program/diagnostics.csv" ] || fail "the installed program wrote no diagnostics.csv"
if [ -f "$source/scripts/gglmbs-plot" ] && command -v python3 > /dev/null; then
  run plot_summary "$prefix/bin/gglmbs-plot" --summary "$scratch/program/diagnostics.csv"
fi

# -- the example against the installed package: CMake ...
run cmake_configure "$cmake" -S "$source/examples" -B "$scratch/build-cmake" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix"
found=$(sed -n 's/^gglmbs_DIR:PATH=//p' "$scratch/build-cmake/CMakeCache.txt")
[ "$(cd "$found" && pwd -P)" = "$(cd "$libdir/cmake/gglmbs" && pwd -P)" ] || fail "find_package(gglmbs) found $found, not the installed package"
run cmake_build "$cmake" --build "$scratch/build-cmake"
if grep -q 'warning:' "$scratch/cmake_build.log"; then fail "the CMake build of the example warns: $(grep 'warning:' "$scratch/cmake_build.log")"; fi
# ... and pkg-config
mkdir -p "$scratch/build-pc"
run pc_build "$make" -C "$scratch/build-pc" -f "$source/examples/Makefile" VPATH="$source/examples" CC="$cc"
if grep -q 'warning:' "$scratch/pc_build.log"; then fail "the pkg-config build of the example warns: $(grep 'warning:' "$scratch/pc_build.log")"; fi
for exe in "$scratch"/build-{cmake,pc}/{coupling,custom_element,custom_scheme}; do
  ldd "$exe" | grep "libgglmbs.*=> $prefix/" > /dev/null || fail "$exe does not load the installed libgglmbs: $(ldd "$exe" | grep gglmbs)"
done

run coupling_cmake "$scratch/build-cmake/coupling"
run coupling_pc "$scratch/build-pc/coupling"
run coupling_np2 "$mpiexec" --oversubscribe -n 2 "$scratch/build-pc/coupling"

# The properties the example measures, for one output file.
check_output() {
  local out=$1
  awk -F' = ' -v out="$out" '
    { value[$1] = $2 }
    function need(key) { if (!(key in value)) { printf "%s: no line \"%s = ...\"\n", out, key; bad = 1; return 0 } return 1 }
    function check(ok, what) { if (!ok) { printf "%s: %s\n", out, what; bad = 1 } }
    END {
      if (need("scheme")) check(value["scheme"] == "em", "scheme is " value["scheme"] ", expected em")
      if (need("particle_order")) check(value["particle_order"] >= 1.8 && value["particle_order"] <= 2.2, "observed order " value["particle_order"] " of the free particle is not within [1.8, 2.2]")
      if (need("particle_error_h2")) check(value["particle_error_h2"] > 0, "zero error against the exact solution: the force did not act")
      if (need("work_energy_balance_rel")) check(value["work_energy_balance_rel"] <= 1e-10, "work-energy balance " value["work_energy_balance_rel"] " (relative) exceeds 1e-10")
      if (need("g_max")) check(value["g_max"] <= 1e-10, "constraint residual g_max = " value["g_max"] " exceeds 1e-10")
      if (need("gv_max")) check(value["gv_max"] <= 1e-10, "velocity constraint residual gv_max = " value["gv_max"] " exceeds 1e-10")
      if (need("steps_h") && need("monitor_calls_h")) check(value["monitor_calls_h"] == value["steps_h"] + 1, "the monitor ran " value["monitor_calls_h"] " times for " value["steps_h"] " steps (expected the initial state and every step)")
      if (need("steps_h2") && need("monitor_calls_h2")) check(value["monitor_calls_h2"] == value["steps_h2"] + 1, "the monitor ran " value["monitor_calls_h2"] " times for " value["steps_h2"] " steps")
      exit bad
    }' "$out" >&2 || fail "$out: wrong results"
}
check_output "$scratch/coupling_cmake.log"
check_output "$scratch/coupling_pc.log"
check_output "$scratch/coupling_np2.log"
grep -q '^ranks = 2$' "$scratch/coupling_np2.log" || fail "the 2-rank run did not run on 2 ranks"
diff "$scratch/coupling_cmake.log" "$scratch/coupling_pc.log" >&2 || fail "the CMake and pkg-config builds print different results"

# -- an element type registered by a program built against the installed headers (gglmbs/elements.h): read by the
# generic input reader, its energy in the model's, its Jacobians under every scheme against finite differences
# (SNESComputeJacobianDefault), energy conservation with EM
run custom_element_cmake "$scratch/build-cmake/custom_element"
run custom_element_pc "$scratch/build-pc/custom_element"
for out in "$scratch/custom_element_cmake.log" "$scratch/custom_element_pc.log"; do
  awk -F' = ' -v out="$out" '
    { value[$1] = $2 }
    function need(key) { if (!(key in value)) { printf "%s: no line \"%s = ...\"\n", out, key; bad = 1; return 0 } return 1 }
    function check(ok, what) { if (!ok) { printf "%s: %s\n", out, what; bad = 1 } }
    END {
      if (need("initial_energy") && need("initial_energy_expected")) {
        d = value["initial_energy"] - value["initial_energy_expected"]; if (d < 0) d = -d
        check(d <= 1e-12 * value["initial_energy_expected"], "initial energy " value["initial_energy"] " is not " value["initial_energy_expected"] ": the registered element is not in the model")
      }
      n = split("em em-g vi-s vi-a vi-b", schemes, " ")
      for (i = 1; i <= n; i++) {
        key = "jacobian_error_" schemes[i]
        if (need(key)) check(value[key] <= 1e-6, schemes[i] ": the Jacobian differs from finite differences by " value[key] " (relative)")
      }
      if (need("energy_drift_em")) check(value["energy_drift_em"] <= 1e-12, "EM energy drift " value["energy_drift_em"] " exceeds 1e-12")
      exit bad
    }' "$out" >&2 || fail "$out: wrong results"
done

# -- a scheme registered by a program built against the installed scheme header (gglmbs/schemes.h): EM written
# again outside the library gives the built-in EM's states exactly, its Jacobian matches finite differences, and
# it conserves energy
run custom_scheme_cmake "$scratch/build-cmake/custom_scheme"
run custom_scheme_pc "$scratch/build-pc/custom_scheme"
for out in "$scratch/custom_scheme_cmake.log" "$scratch/custom_scheme_pc.log"; do
  awk -F' = ' -v out="$out" '
    { value[$1] = $2 }
    function need(key) { if (!(key in value)) { printf "%s: no line \"%s = ...\"\n", out, key; bad = 1; return 0 } return 1 }
    function check(ok, what) { if (!ok) { printf "%s: %s\n", out, what; bad = 1 } }
    END {
      if (need("max_state_difference")) check(value["max_state_difference"] == 0, "my-em differs from em by " value["max_state_difference"])
      if (need("jacobian_error_my-em")) check(value["jacobian_error_my-em"] <= 1e-6, "my-em: the Jacobian differs from finite differences by " value["jacobian_error_my-em"])
      if (need("energy_drift_my-em")) check(value["energy_drift_my-em"] <= 1e-12, "my-em: energy drift " value["energy_drift_my-em"] " exceeds 1e-12")
      exit bad
    }' "$out" >&2 || fail "$out: wrong results"
done

passed=1
