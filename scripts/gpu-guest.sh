#!/usr/bin/env bash
# Issue #22 on a real driver: the guest programs (tests/programs/guest.c) on NVIDIA's OpenCL,
# without clxfer and under it (a layer through ocl-icd, by LD_PRELOAD through CUDA's loader), in
# trace and summary mode; each run's output must equal the run without clxfer. Then the storm's
# cost, interleaved. Runs on the device machine, in the repository root, with .gpu/ packed by
#   mkdir -p .gpu; strip -o .gpu/libclxfer.so target/release/libclxfer.so;
#   cc -O2 -Wno-deprecated-declarations tests/programs/guest.c -o .gpu/guest -lOpenCL -lpthread;
#   cc -O2 tests/programs/storm.c -o .gpu/clxfer-storm -lOpenCL -lpthread
# Results: $OUT/guest.txt and $OUT/storm.txt. badlist crashes NVIDIA's driver itself (it reads
# past the unknown name): the runs under clxfer must crash alike.
set -uo pipefail
G="$PWD/.gpu"
chmod +x "$G"/* 2>/dev/null
mkdir -p /tmp/t
source scripts/gpu-ocl-icd.sh
runs_guest() { env "$@" TEST_PLATFORM=NVIDIA "$G/guest" queries 2>/dev/null | grep -q checksum; }
ocl_icd runs_guest > /dev/null
export TEST_PLATFORM=NVIDIA
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "ocl-icd: $OCLICD"; } > "$OUT/guest.txt" 2>&1
one() {  # one LABEL ARGS... (env in E)
  local label=$1; shift
  rm -f /tmp/t/*
  env "${E[@]}" CLXFER_DIR=/tmp/t timeout 300 "$G/guest" "$@" > /tmp/out.txt 2> /tmp/err.txt
  echo "rc $?" >> /tmp/out.txt
  if [ "$label" = none ]; then cp /tmp/out.txt /tmp/none.txt; fi
  if cmp -s /tmp/out.txt /tmp/none.txt; then same=same; else same=DIFFERS; fi
  echo "== $* | $label: $same, $(ls /tmp/t | wc -l) trace(s)" >> "$OUT/guest.txt"
  if [ "$label" = none ] || [ $same = DIFFERS ]; then cat /tmp/out.txt >> "$OUT/guest.txt"; fi
  grep -E "resident memory grew|internal error|panicked" /tmp/err.txt >> "$OUT/guest.txt"
}
# Not here: stuck (NVIDIA runs an out-of-order queue's commands in order, so the writes behind the
# stuck marker never complete, without clxfer too), fork children making calls (CUDA does not
# support its use after fork), and the test-ICD modes.
for args in "queries" "badlist" "atexit" "fork 1000 0"; do
  E=(); one none $args
  for mode in trace summary; do
    E=($OCLICD OPENCL_LAYERS="$G/libclxfer.so" CLXFER_MODE=$mode); one "layer $mode" $args
    E=(LD_PRELOAD="$G/libclxfer.so" CLXFER_MODE=$mode); one "preload $mode" $args
  done
done
# The storm (1 thread, 200,000 enqueues), interleaved rounds: none, summary, trace by preload.
for round in 1 2 3; do
  for cfg in none summary trace; do
    case $cfg in
      none) e=();;
      *) e=(LD_PRELOAD="$G/libclxfer.so" CLXFER_MODE=$cfg);;
    esac
    rm -f /tmp/t/*
    { echo "== round $round $cfg"; env "${e[@]}" CLXFER_DIR=/tmp/t timeout 120 "$G/clxfer-storm" 200000 1; } >> "$OUT/storm.txt" 2>&1
  done
done
