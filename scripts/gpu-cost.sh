#!/usr/bin/env bash
# Issue #42 on the H200: what clxfer costs the storm (tests/programs/storm.c, through CUDA's
# loader, clxfer preloaded), 1 thread and 4, in one visit: none, summary, trace, every command
# timed (summary-all, trace-all), the storm making its own event per command without clxfer
# (own-events: the driver's price for device timing), and the build before this one's timer fix
# (@before) for the all rows; interleaved rounds (scripts/gpu-storm.sh).
#   scripts/gpu-cost.sh pack [BEFORE.so]   here: build and pack into .gpu/ (ignored)
#   device run: carry [".gpu"], command "bash scripts/gpu-cost.sh run" -> $OUT/storm-{1,4}.txt
#     (THREAD_SETS="16" bash scripts/gpu-cost.sh run -> $OUT/storm-16.txt)
#   scripts/gpu-cost.sh report DIR         here: medians, minima and paired differences
# With one thread a run is fast or slow whatever it runs: 15 rounds put one build's paired
# medians ±0.3 µs apart; 80 rounds of 20,000 enqueues (THREAD_SETS=1 ENQUEUES1=20000 ROUNDS=80,
# three configurations) fit one call. Without `none` the report pairs with own-events only.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
pack)
    source scripts/gpu-pack.sh
    gpu_pack fresh
    if [[ -n "${2:-}" ]]; then strip -o .gpu/libclxfer-before.so "$2"; fi
    cc -O2 -Wall tests/programs/storm.c -o .gpu/clxfer-storm -lOpenCL -lpthread
    du -sh .gpu
    ;;
run)
    # THREAD_SETS picks the thread counts (one visit's command may run 10 minutes: 1 and 4 in
    # one, 16 in the next); each count's enqueues per thread keep a run near a second.
    configs="${COST_CONFIGS:-none summary trace summary-all trace-all own-events}"
    [[ -f .gpu/libclxfer-before.so ]] && configs+=" summary-all@before trace-all@before"
    for threads in ${THREAD_SETS:-1 4}; do
        case $threads in 1) n=${ENQUEUES1:-100000};; 4) n=${ENQUEUES4:-50000};; *) n=${ENQUEUES16:-20000};; esac
        ROUNDS=${ROUNDS:-15} THREADS=$threads ENQUEUES=$n CONFIGS="$configs" \
            STORM_OUT="$OUT/storm-$threads.txt" bash scripts/gpu-storm.sh > "$OUT/summary-$threads.txt" 2>&1
    done
    ;;
report)
    python3 - "$2" <<'PY'
import collections, statistics, sys, os
for threads in (1, 4, 16):
    path = os.path.join(sys.argv[1], f"storm-{threads}.txt")
    if not os.path.exists(path):
        continue
    us, cpu = collections.defaultdict(dict), collections.defaultdict(dict)
    writer, driver = collections.defaultdict(dict), collections.defaultdict(dict)
    for line in open(path):
        p = line.split()
        if len(p) >= 6 and p[2] == "us_per_enqueue":
            us[p[1]][int(p[0])], cpu[p[1]][int(p[0])] = float(p[3]), float(p[5])
            if len(p) >= 8 and p[6] == "writer_cpu_us_per_enqueue":
                writer[p[1]][int(p[0])] = float(p[7])
            if len(p) >= 10 and p[8] == "driver_enqueue_us":
                driver[p[1]][int(p[0])] = float(p[9])
    none, own = us.get("none", {}), us.get("own-events", {})
    base = none or own
    rounds = len(base)
    # The run-to-run noise: half the spread between the quartiles of the baseline's (none, else
    # own-events) round-to-round differences. With one thread runs split into a fast and a slow
    # mode (the fifth visit): 15 rounds left the paired medians ±0.3 µs apart for one build.
    diffs = sorted(base[r] - base[r - 1] for r in base if r - 1 in base)
    q = statistics.quantiles(diffs, n=4) if len(diffs) >= 4 else [0, 0, 0]
    print(f"{threads} thread(s), {rounds} rounds; {'none' if none else 'own-events'}'s "
          f"round-to-round difference, interquartile: {q[0]:+.2f} .. {q[2]:+.2f} us")
    print(f"  {'configuration':22}{'median':>9}{'min':>8}{'paired':>9}{'paired min':>11}"
          f"{'vs own-events':>15}{'its IQR':>15}{'caller CPU paired':>19}{'writer CPU':>12}{'in driver':>11}")
    nan = float("nan")
    for c, v in us.items():
        rs = [r for r in v if r in base]
        paired = [v[r] - none[r] for r in rs if r in none] or [nan]
        vs_own = [v[r] - own[r] for r in rs if r in own]
        iqr = statistics.quantiles(vs_own, n=4) if len(vs_own) >= 4 else [nan, nan, nan]
        cp = [cpu[c][r] - cpu["none"][r] for r in rs if r in none] or [nan]
        print(f"  {c:22}{statistics.median(v.values()):9.2f}{min(v.values()):8.2f}"
              f"{statistics.median(paired):+9.2f}{min(paired):+11.2f}"
              f"{(statistics.median(vs_own) if vs_own else nan):+15.2f}"
              f"{iqr[0]:+8.2f}..{iqr[2]:+5.2f}"
              f"{statistics.median(cp):+19.2f}"
              f"{(statistics.median(writer[c].values()) if writer[c] else 0):12.2f}"
              f"{(statistics.median(driver[c].values()) if driver[c] else nan):11.1f}")
PY
    ;;
*)
    echo "usage: scripts/gpu-cost.sh pack [BEFORE.so] | run | report DIR" >&2
    exit 2
    ;;
esac
