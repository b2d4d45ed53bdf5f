#!/usr/bin/env bash
# The overnight fuzzing job: builds the fuzz (libFuzzer, ASan + UBSan),
# fuzz-fast (libFuzzer, no sanitizer) and coverage presets, then runs
# fuzz/overnight.py (every target for --time seconds with --jobs workers, in
# rounds alternating the two builds; merge, triage, coverage, report), then the
# mutation checks (ctest -L mutation: the property catalogue's and the
# original's proof), then bounded-exhaustive checking (scope medium), then the asan
# preset's slow tests that CI leaves out (tests/slow-under-asan.txt;
# SEQPACK_OVERNIGHT_SLOW_ASAN=0 skips them), then ClusterFuzzLite's
# build.sh under OSS-Fuzz's address (with three planted breaks), undefined and
# coverage flags (tests/fuzz/cfl_build_test.sh; SEQPACK_OVERNIGHT_CFL=0 skips them).
#   fuzz/overnight.sh [--time SECONDS_PER_TARGET] [--jobs N] [--round SECONDS] [--state DIR] [--resume] [--targets T...]
# Report: <state>/report.md and report.json (default state build/fuzz-overnight).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for preset in fuzz fuzz-fast coverage; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
done
status=0
python3 fuzz/overnight.py "$@" || status=$?
# Then the mutation checks (ctest label mutation: the property catalogue's,
# about 4 minutes, and the proof on the original module, conformance-mutation,
# hours on 2 cores; so here and not in CI); skipped with
# SEQPACK_OVERNIGHT_MUTATION=0. The original's table: build/default/python-mutation/mutation.md.
if [[ "${SEQPACK_OVERNIGHT_MUTATION:-1}" != 0 ]]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target seqpack
  ctest --preset default -L mutation --output-on-failure || status=1
fi
# Then bounded-exhaustive checking at the largest scope that fits in an hour
# (docs/exhaustive.md): medium in process (the catalogue and the GPU
# implementation's host builds), the LibTorch binding over the protocol on
# the small scope, and the mutant table of the catalogue's mutants at tiny and
# small (build/exhaustive-mutants/table.log); SEQPACK_OVERNIGHT_EXHAUSTIVE=0
# skips them.
if [[ "${SEQPACK_OVERNIGHT_EXHAUSTIVE:-1}" != 0 ]]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target seqpack  # and the ports this build has
  build/default/cli/seqpack exhaustive --scope medium || status=1
  if [[ -x build/default/ports/torch_port ]]; then
    build/default/cli/seqpack conform --exhaustive small --no-vectors --port build/default/ports/torch_port || status=1
  fi
  mkdir -p build/exhaustive-mutants
  SEQPACK_MUTATION_MODE=exhaustive tests/properties/mutation/run.sh . build/exhaustive-mutants \
    > build/exhaustive-mutants/table.log 2>&1 || status=1
  # The original's mutants through its adapter, the tiny scope alone (no
  # vectors, no random case): every one of the 930 takes up to 4 minutes
  # where it survives, so only with SEQPACK_OVERNIGHT_EXHAUSTIVE_ORIGINAL=1.
  if [[ "${SEQPACK_OVERNIGHT_EXHAUSTIVE_ORIGINAL:-0}" == 1 ]]; then
    /usr/bin/python3 ports/python/mutation_score.py --seqpack build/default/cli/seqpack --seeds 1 \
      --work build/exhaustive-mutants/original --conform-args "--exhaustive tiny --no-vectors" || status=1
  fi
fi
if [[ "${SEQPACK_OVERNIGHT_SLOW_ASAN:-1}" != 0 ]]; then
  scripts/run-tests.sh --slow-asan || status=1
fi
if [[ "${SEQPACK_OVERNIGHT_CFL:-1}" != 0 ]]; then
  SEQPACK_JOBS=$(nproc) tests/fuzz/cfl_build_test.sh address --plant || status=1
  for sanitizer in undefined coverage; do
    SEQPACK_JOBS=$(nproc) tests/fuzz/cfl_build_test.sh "$sanitizer" || status=1
  done
fi
exit "$status"
