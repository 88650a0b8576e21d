#!/usr/bin/env bash
# Memory checks of the program on the paper examples and the generator/mesh inputs (docs/robustness.md):
#  1. valgrind memcheck of inputs/pendulum3d.yaml, heavy_top.yaml and four_particle.yaml, every scheme at
#     least once, a trajectory + checkpoint run, a failed step and an input error: no memcheck error and no definitely
#     lost block (Open MPI's own: /usr/share/openmpi/openmpi-valgrind.supp and tests/memcheck/valgrind.supp);
#  2. PETSc's -malloc_debug -malloc_dump on the same examples and on a chain, a rigid chain, a net and a
#     mesh input, a failed step and an input error, on 1 and 2 ranks: no PETSc allocation left at
#     PetscFinalize.
# Each run is a few steps (-mbs_t_end). Silent when it passes; on failure the logs are kept and named.
#
# Usage: memcheck.sh <gglmbs program> <source dir> <mpiexec> [valgrind]
set -uo pipefail

gglmbs=$1 source=$2 mpiexec=$3 valgrind=${4:-valgrind}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gglmbs_memcheck.XXXXXX")
failures=0
trap 'if [ $failures = 0 ]; then rm -rf "$scratch"; else echo "memcheck: logs kept in $scratch" >&2; fi' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# hwloc's x86 CPUID backend does not work under valgrind (it says so on stderr); the Linux backend suffices.
export HWLOC_COMPONENTS=-x86

fail() {
  echo "memcheck: $*" >&2
  failures=$((failures + 1))
}

valgrind_status=42
# a run corrupting memory may hang instead of failing: each run is limited (exit status 124)
run_timeout=120
vg_suppressions=(--suppressions="$source/tests/memcheck/valgrind.supp")
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] && vg_suppressions+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)

# memcheck <name> <expected program exit status> <program arguments...>
# (--track-origins=yes, left out for time, says where an uninitialised value came from.)
# --keep-debuginfo: Open MPI unloads its components in MPI_Finalize; their frames stay named, so the
# suppressions can match the Open MPI allocations made in MPI_Init.
memcheck() {
  local name=$1 expect=$2 status
  shift 2
  timeout "$run_timeout" "$valgrind" --tool=memcheck --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --error-exitcode=$valgrind_status --keep-debuginfo=yes --num-callers=50 "${vg_suppressions[@]}" \
    --log-file="$scratch/$name.valgrind.log" "$gglmbs" "$@" -mbs_output_dir "$scratch/$name" > "$scratch/$name.out" 2>&1
  status=$?
  if [ $status = $valgrind_status ]; then
    fail "valgrind $name: memcheck errors or definitely lost blocks:"
    sed -n '/ERROR SUMMARY/p' "$scratch/$name.valgrind.log" >&2
    grep -E -A25 '^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|Mismatched|[0-9,]+ (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in [0-9,]+ blocks are definitely)' "$scratch/$name.valgrind.log" | head -60 >&2
  elif [ $status != "$expect" ]; then
    fail "valgrind $name: gglmbs exited with status $status, expected $expect:"
    tail -n 20 "$scratch/$name.out" >&2
  elif ! grep -q 'ERROR SUMMARY: 0 errors' "$scratch/$name.valgrind.log"; then
    fail "valgrind $name: no clean error summary in $scratch/$name.valgrind.log"
  fi
}

# malloc_dump <name> <ranks> <expected exit status> <program arguments...>: PETSc prints the allocations
# left at PetscFinalize ("[rank]Total space allocated ..." and "[rank] <bytes> bytes <function>() at <file>:<line>").
malloc_dump() {
  local name=$1 np=$2 expect=$3 status
  shift 3
  timeout "$run_timeout" "$mpiexec" -n "$np" "$gglmbs" "$@" -mbs_output_dir "$scratch/$name" -malloc_debug -malloc_dump > "$scratch/$name.out" 2>&1
  status=$?
  if [ $status != "$expect" ]; then
    fail "malloc_dump $name ($np ranks): gglmbs exited with status $status, expected $expect:"
    tail -n 20 "$scratch/$name.out" >&2
  elif grep -E -q 'Total space allocated|bytes .*\(\) at .*:[0-9]+' "$scratch/$name.out"; then
    fail "malloc_dump $name ($np ranks): PETSc memory not freed at PetscFinalize:"
    grep -E 'Total space allocated|bytes .*\(\) at .*:[0-9]+' "$scratch/$name.out" | head -30 >&2
  fi
}

in=$source/inputs
bad=$source/tests/inputs/bad

memcheck pendulum_vi-a 0 -i "$in/pendulum3d.yaml" -mbs_t_end 0.2 -mbs_scheme vi-a
memcheck heavy_top_vi-b 0 -i "$in/heavy_top.yaml" -mbs_t_end 0.01 -mbs_scheme vi-b
memcheck heavy_top_em-g 0 -i "$in/heavy_top.yaml" -mbs_t_end 0.01 -mbs_scheme em-g -mbs_predictor advanced
memcheck four_particle_vi-s 0 -i "$in/four_particle.yaml" -mbs_t_end 0.05 -mbs_scheme vi-s
memcheck four_particle_em_files 0 -i "$in/four_particle.yaml" -mbs_t_end 0.05 -mbs_scheme em -mbs_trajectory xdmf -mbs_checkpoint_every 2 -mbs_write_state "$scratch/four_particle_state.csv" -mbs_adapt
memcheck bad_input 1 -i "$bad/mesh_truncated_nodes.yaml"
# a step that fails (one Newton iteration allowed): the failure report and its checkpoint
memcheck failed_step 1 -i "$in/pendulum3d.yaml" -mbs_t_end 0.2 -snes_max_it 1

for np in 1 2; do
  malloc_dump pendulum_em_np$np $np 0 -i "$in/pendulum3d.yaml" -mbs_t_end 0.2 -mbs_scheme em
  malloc_dump heavy_top_vi-b_np$np $np 0 -i "$in/heavy_top.yaml" -mbs_t_end 0.01 -mbs_scheme vi-b
  malloc_dump four_particle_vi-a_np$np $np 0 -i "$in/four_particle.yaml" -mbs_t_end 0.05 -mbs_scheme vi-a -mbs_trajectory xdmf -mbs_checkpoint_every 2
  malloc_dump four_particle_vi-s_np$np $np 0 -i "$in/four_particle.yaml" -mbs_t_end 0.05 -mbs_scheme vi-s
  malloc_dump chain_em-g_np$np $np 0 -i "$in/chain1000.yaml" -mbs_t_end 0.005 -mbs_scheme em-g
  malloc_dump rigid_chain_em_np$np $np 0 -i "$in/rigid_chain1000.yaml" -mbs_t_end 0.005 -mbs_scheme em
  malloc_dump net_em_np$np $np 0 -i "$in/net100x100.yaml" -mbs_t_end 0.002
  malloc_dump mesh_vi-b_np$np $np 0 -i "$in/mesh_net.yaml" -mbs_t_end 0.005 -mbs_scheme vi-b
  malloc_dump failed_step_np$np $np 1 -i "$in/chain1000.yaml" -mbs_t_end 0.005 -snes_max_it 1
  malloc_dump bad_input_np$np $np 1 -i "$bad/mesh_truncated_nodes.yaml"
done

[ $failures = 0 ] || { echo "memcheck: $failures check(s) failed" >&2; exit 1; }
