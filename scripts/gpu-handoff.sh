#!/usr/bin/env bash
# Issue #30 on the GPUs the device tool lends: the hand-off program (tests/programs/handoff.c) in
# each mode under clxfer, as a layer through ocl-icd and by preload through CUDA's loader, and
# without clxfer (the sums to compare). With one GPU both queues are on it (HANDOFF_ONE_DEVICE);
# with two, each queue has its own.
#   scripts/gpu-handoff.sh pack     here: build and pack what travels into .gpu/ (ignored)
#   device run: carry [".gpu"], command "bash scripts/gpu-handoff.sh run"
#                                   -> $OUT/handoff.tar.gz: per run its stdout, stderr, trace
#                                      and JSON report; nvidia-smi's view of the machine
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
pack)
    source scripts/gpu-pack.sh
    gpu_pack
    cc -O2 -Wall tests/programs/handoff.c -o .gpu/clxfer-handoff -lOpenCL
    du -sh .gpu
    ;;
run)
    R="$OUT/handoff"
    mkdir -p "$R"
    G="$PWD/.gpu"
    chmod +x "$G"/*
    source scripts/gpu-ocl-icd.sh
    lists_nvidia() { env "$@" clinfo -l 2>/dev/null | grep -q NVIDIA; }
    ocl_icd lists_nvidia > "$R/loaders.txt" 2>&1 || true
    gpus=$(nvidia-smi -L | wc -l)
    { nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -8; } > "$R/machine.txt" 2>&1
    one=(); [ "$gpus" -lt 2 ] && one=(HANDOFF_ONE_DEVICE=1)
    for mode in correct race host source initboth reread; do
        for how in none layer preload; do
            case $how in
                none) e=();;
                layer) e=($OCLICD OPENCL_LAYERS="$G/libclxfer.so");;
                preload) e=(LD_PRELOAD="$G/libclxfer.so");;
            esac
            n="$how-$mode"
            env "${e[@]}" "${one[@]}" HANDOFF_TIME=1 TEST_PLATFORM=NVIDIA CLXFER_DEVICE_TIMING=all \
                CLXFER_RULES=auto CLXFER_OUTPUT="$R/$n.json" CLXFER_REPORT="$R/$n.report.json" \
                timeout 120 "$G/clxfer-handoff" "$mode" > "$R/$n.out" 2> "$R/$n.err"
            echo "$n: exit $?" >> "$R/runs.txt"
        done
    done
    cat "$R/runs.txt" "$R/machine.txt"
    tar czf "$OUT/handoff.tar.gz" -C "$OUT" handoff
    rm -rf "$R"
    ;;
*)
    echo "usage: scripts/gpu-handoff.sh pack|run" >&2
    exit 2
    ;;
esac
