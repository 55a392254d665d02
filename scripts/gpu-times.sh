#!/usr/bin/env bash
# Issue #41 on the H200: which commands NVIDIA times with another command's times, and which
# read complete before what they wait for (tests/programs/borrowed.c, raw, no clxfer); the
# hand-off's no-op migration probe; and the H200 example (docs/examples, as scripts/gpu-truth
# makes it) under this build, to show what clxfer now marks.
#   scripts/gpu-times.sh pack     here: build and pack what travels into .gpu/ (ignored)
#   device run: carry [".gpu"], command "bash scripts/gpu-times.sh run"
#                                 -> $OUT/times.tar.gz
#   scripts/gpu-times.sh report TARBALL   here: the table for docs/ground-truth.md, and the
#                                 example into docs/examples/
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
pack)
    source scripts/gpu-pack.sh
    gpu_pack fresh
    cc -O2 -Wall tests/programs/borrowed.c -o .gpu/clxfer-borrowed -lOpenCL
    cc -O2 -Wall tests/programs/handoff.c -o .gpu/clxfer-handoff -lOpenCL
    cc -O2 -Wall -Wno-deprecated-declarations tests/programs/gpu_scenarios.c -o .gpu/clxfer-gpu-scenarios -lOpenCL
    du -sh .gpu
    ;;
run)
    R="$OUT/times"
    mkdir -p "$R/example"
    G="$PWD/.gpu"
    chmod +x "$G"/*
    { nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; } > "$R/machine.txt" 2>&1
    for round in 1 2 3; do
        echo "== round $round" >> "$R/borrowed.txt"
        TEST_PLATFORM=NVIDIA BORROWED_ROUNDS=5 BORROWED_SPIN="${SPIN:-2000000}" timeout 120 \
            "$G/clxfer-borrowed" >> "$R/borrowed.txt" 2>&1
        echo "borrowed $round: exit $?" >> "$R/runs.txt"
    done
    for round in 1 2 3 4 5 6; do
        HANDOFF_ONE_DEVICE=1 HANDOFF_PROBE=1 TEST_PLATFORM=NVIDIA timeout 60 \
            "$G/clxfer-handoff" correct >> "$R/handoff-probe.txt" 2>&1
        echo "handoff probe $round: exit $?" >> "$R/runs.txt"
    done
    # The probe under clxfer (every command timed), to compare what it marks.
    LD_PRELOAD="$G/libclxfer.so" CLXFER_DEVICE_TIMING=all TEST_PLATFORM=NVIDIA BORROWED_ROUNDS=2 \
        BORROWED_SPIN="${SPIN:-2000000}" CLXFER_OUTPUT="$R/borrowed-trace.json" timeout 120 \
        "$G/clxfer-borrowed" > "$R/borrowed-clxfer.txt" 2>&1
    echo "borrowed under clxfer: exit $?" >> "$R/runs.txt"
    # The example, as gpu-visit.sh makes it.
    LD_PRELOAD="$G/libclxfer.so" CLXFER_DIR="$R/example" SCEN_MIB=4 \
        CLXFER_REPORT="$R/example/summary.md" timeout 240 "$G/clxfer-gpu-scenarios" \
        > "$R/example/scenarios.txt" 2> "$R/example/stderr.txt"
    echo "example: exit $?" >> "$R/runs.txt"
    cat "$R/runs.txt"
    tar czf "$OUT/times.tar.gz" -C "$OUT" times
    rm -rf "$R"
    ;;
report)
    tarball=${2:?usage: scripts/gpu-times.sh report times.tar.gz}
    work=$(mktemp -d)
    tar xzf "$tarball" -C "$work"
    r="$work/times"
    python3 - "$r/borrowed.txt" <<'PY'
import collections, re, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    if not line.startswith("probe "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[2:])
    r = rows.setdefault(line.split()[1], {"moves": f["moves"], "n": 0, "same": collections.Counter(),
                                          "early": 0, "before": 0, "dur": []})
    r["n"] += 1
    r["same"][f["same_as"]] += 1
    r["early"] += f["complete_before_wait"] == "yes"
    r["before"] += f["starts_before_wait_ends"] == "yes"
    r["dur"].append(int(f["dur"]))
print("| command | moves bytes | runs | times equal to another command's | starts before the kernel it waits for ends | reads complete while the kernel runs | median duration |")
print("|---|---|---|---|---|---|---|")
for name, r in rows.items():
    same = ", ".join(f"{k} {v}" for k, v in r["same"].items() if k != "-") or "none"
    d = sorted(r["dur"])[len(r["dur"]) // 2]
    print(f"| {name} | {'yes' if r['moves'] == '1' else 'no'} | {r['n']} | {same} | {r['before']} | {r['early']} | {d / 1000:.1f} µs |")
PY
    echo
    grep -h "probe:" "$r/handoff-probe.txt" | sort | uniq -c
    cat "$r/runs.txt"
    mkdir -p docs/examples
    cp "$(ls "$r/example"/clxfer-*.json | head -1)" docs/examples/h200-trace.json
    cp "$r/example/summary.md" docs/examples/h200-summary.md
    cp "$r/borrowed-trace.json" /tmp/borrowed-trace.json
    ;;
*)
    echo "usage: scripts/gpu-times.sh pack|run|report" >&2
    exit 2
    ;;
esac
