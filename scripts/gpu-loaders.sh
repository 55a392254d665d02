#!/usr/bin/env bash
# Issue #55 on a real NVIDIA machine: `clxfer run` with CUDA's own loader first on the library
# path (it ignores OPENCL_LAYERS) traces NVIDIA's platform, for a program linked to the loader
# and for one that dlopens it (hashcat's way); `--layer` alone says why it saw nothing;
# `clxfer doctor` tests whether each loader loads layers; a SIGTERM from `timeout` finishes the
# summary on NVIDIA too.
#   scripts/gpu-loaders.sh pack            here: build and pack .gpu/
#   bash scripts/gpu-loaders.sh run        there (device run, carry [".gpu"]): $OUT/loaders.txt
set -uo pipefail
case "${1:-}" in
pack)
    source scripts/gpu-pack.sh
    gpu_pack fresh
    cc -O2 -Wno-deprecated-declarations tests/programs/guest.c -o .gpu/guest -lOpenCL -lpthread
    cc -O2 tests/programs/dlopened.c -o .gpu/dlopened -ldl
    cc -O2 -Wno-deprecated-declarations tests/programs/signalled.c -o .gpu/signalled -lOpenCL -lpthread
    ls -la .gpu
    ;;
run)
    G="$PWD/.gpu"
    chmod +x "$G"/*
    source scripts/gpu-ocl-icd.sh
    export TEST_PLATFORM=NVIDIA
    T=/tmp/loaders; rm -rf "$T"; mkdir -p "$T"; cd "$T"
    {
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
        ldconfig -p | grep -i libOpenCL
        cat /etc/OpenCL/vendors/* 2>&1
        echo "== doctor, the default loader"; "$G/clxfer" doctor 2>&1 | sed -n '/^OpenCL:/,$p'
        echo "== doctor, ocl-icd"; env $OCLICD "$G/clxfer" doctor 2>&1 | sed -n '/^OpenCL:/,$p'
        for p in "guest queries" "dlopened local" "dlopened global"; do
            echo "== $p: without clxfer"; timeout 120 $G/$p 2>&1 | tail -3
            echo "== $p: clxfer run --summary (the default way)"
            timeout 120 "$G/clxfer" run --summary --log info -- $G/$p > out.txt 2> err.txt; echo "exit $?"
            tail -2 out.txt; grep -E "^device|H2D|D2H|^clxfer: (saw|report|no|LD_PRELOAD)" err.txt
            echo "== $p: clxfer run --layer --summary"
            timeout 120 "$G/clxfer" run --layer --summary -- $G/$p > out.txt 2> err.txt; echo "exit $?"
            grep -E "^device|^clxfer:" err.txt
        done
        echo "== dlopened: clxfer run (a trace), then clxfer report"
        timeout 120 "$G/clxfer" run -o "$T/t.json" -- "$G/dlopened" > /dev/null 2> err.txt; echo "exit $?"
        grep "^clxfer:" err.txt
        "$G/clxfer" report "$T/t.json" 2>&1 | head -8
        echo "== signalled wait: clxfer run --summary -- timeout --foreground -s TERM 3"
        timeout 120 "$G/clxfer" run --summary -- timeout --foreground -s TERM 3 "$G/signalled" wait > out.txt 2> err.txt; echo "exit $?"
        cat out.txt; grep -E "^clxfer|^device|H2D" err.txt
    } > "$OUT/loaders.txt" 2>&1
    ;;
*) echo "usage: scripts/gpu-loaders.sh pack|run" >&2; exit 2 ;;
esac
