#!/usr/bin/env bash
# Where the storm's time goes on NVIDIA, by thread, library and function (docs/PERFORMANCE.md,
# "Where trace `all` spends"): perf's CPU-clock samples of the 4-thread storm under summary
# `all`, trace `all` and the storm's own events, twice each, and the calls under which the
# driver's profiling-query spin is reached. The device machine has no perf: this machine's (Debian's
# linux-perf) is carried with the libraries it links, and run through the carried loader.
#   scripts/gpu-profile.sh pack     here: the storm, the layer with its symbols, perf, into .gpu/
#   device run: carry [".gpu"], command "bash scripts/gpu-profile.sh run" -> $OUT/profile.txt
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
pack)
    source scripts/gpu-pack.sh
    gpu_pack
    cc -O2 -Wall tests/programs/storm.c -o .gpu/clxfer-storm -lOpenCL -lpthread
    # Symbols kept (debug info dropped): perf names clxfer's functions.
    strip --strip-debug -o .gpu/libclxfer-sym.so target/release/libclxfer.so
    perf=$(command -v perf) || { echo "gpu-profile: perf is missing (apt install linux-perf)" >&2; exit 1; }
    mkdir -p .gpu/perf/lib
    cp -L "$perf" .gpu/perf/perf
    ldd "$perf" | awk '$3 ~ /^\// {print $3}' | xargs -I{} cp -L {} .gpu/perf/lib/
    cp -L /lib64/ld-linux-x86-64.so.2 .gpu/perf/ld.so
    du -sh .gpu
    ;;
run)
    # Reports that find nothing (a pipeline cut short by head) must not end the run.
    set +e +o pipefail
    G="$PWD/.gpu"
    chmod +x "$G"/* "$G"/perf/* 2>/dev/null || true
    P() { "$G/perf/ld.so" --library-path "$G/perf/lib" "$G/perf/perf" "$@"; }
    mkdir -p /tmp/t
    export TEST_PLATFORM=${TEST_PLATFORM-NVIDIA}
    out="$OUT/profile.txt"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out" 2>/dev/null || true
    # CONFIG -> the environment and the storm's own argument.
    setup() {
        case $1 in
        own-events) e=() a=(events) ;;
        *) e=(LD_PRELOAD="$G/libclxfer-sym.so" CLXFER_DIR=/tmp/t CLXFER_MODE=${1%-all} CLXFER_DEVICE_TIMING=all) a=() ;;
        esac
    }
    for round in 1 2; do
        for c in own-events summary-all trace-all; do
            setup "$c"
            rm -f /tmp/t/*
            us=$(env "${e[@]}" "$G/perf/ld.so" --library-path "$G/perf/lib" "$G/perf/perf" record -F 4999 \
                -o /tmp/flat.data -- "$G/clxfer-storm" 50000 4 "${a[@]}" 2>/dev/null | grep us_per | tr '\n' ' ')
            echo "== $c, round $round: $us" >> "$out"
            P report -i /tmp/flat.data -n --no-children --sort comm,dso --stdio 2>/dev/null | grep '%' | head -14 >> "$out"
            P report -i /tmp/flat.data -n --no-children --comm clxfer-storm --sort dso,sym --stdio 2>/dev/null \
                | grep '%' | head -40 >> "$out"
        done
    done
    # Call graphs (DWARF): which calls reach the driver's hottest addresses on the storm's threads.
    for c in own-events summary-all trace-all; do
        setup "$c"
        rm -f /tmp/t/*
        env "${e[@]}" "$G/perf/ld.so" --library-path "$G/perf/lib" "$G/perf/perf" record -F 2999 \
            --call-graph dwarf,16384 -o /tmp/graph.data -- "$G/clxfer-storm" 20000 4 "${a[@]}" > /dev/null 2>&1
        P script -i /tmp/graph.data 2>/dev/null | python3 -c '
import collections, re, sys
name = sys.argv[1]
hot = collections.Counter()   # (the driver address page offset, the first clxfer or OpenCL frame)
total = 0
for sample in sys.stdin.read().split("\n\n"):
    lines = sample.strip().split("\n")
    if not lines or not lines[0].startswith("clxfer-storm"):
        continue
    total += 1
    frames = [l.split(None, 1) for l in lines[1:] if l.strip()]
    if not frames or "libnvidia-opencl" not in frames[0][-1]:
        continue
    names = [re.sub(r"\+0x[0-9a-f]+", "", f[-1]).split(" (")[0] for f in frames]
    caller = next((n for n in names if "clxfer::" in n), None) or next(
        (n for n in names if re.match(r"cl[A-Z]\w+$", n)), "-")
    hot[(frames[0][0][-3:], caller[:110])] += 1
print(f"== {name}: call graph, {total} samples on the storm threads; driver address (last 3 hex digits) and caller")
for (page, caller), n in hot.most_common(12):
    print(f"  {n:6}  ...{page}  {caller}")
' "$c" >> "$out"
    done
    tail -40 "$out"
    ;;
*)
    echo "usage: scripts/gpu-profile.sh pack | run" >&2
    exit 2
    ;;
esac
