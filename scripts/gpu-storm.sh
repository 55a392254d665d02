#!/usr/bin/env bash
# The storm's cost on NVIDIA (docs/PERFORMANCE.md, "NVIDIA H200"): 4 KiB write/read/map/unmap
# enqueues through the machine's default loader (CUDA's) with clxfer preloaded, in interleaved
# rounds of each configuration; prints one line per run ("ROUND CONFIG us_per_enqueue N
# cpu_us_per_enqueue C writer_cpu_us_per_enqueue W", and "driver_enqueue_us D" where the run's
# report gives the enqueues' time in the driver) and, per configuration, the medians and the
# medians of each round's
# difference to no clxfer. Runs on the device machine in the repository root with .gpu/ packed by
# `scripts/gpu-truth pack`.
#   STORM_CPUS pins every run (taskset -c LIST).
#   ROUNDS (7), THREADS (1), ENQUEUES per thread (200000), CONFIGS (below) choose the runs:
#   none; summary, trace (default sampled device timing); summary-all, trace-all
#   (CLXFER_DEVICE_TIMING=all); summary-off, trace-off; *-all-nocb (all, no completion callbacks:
#   CLXFER_TEST_CALLBACKS=off); own-profiling, own-events, own-callbacks (the storm timing itself,
#   no clxfer: what the driver charges); *-every:N (a small command timed in N instead of by the
#   budget: CLXFER_TEST_SAMPLE_EVERY); any of them +nocb (no completion callbacks:
#   CLXFER_TEST_CALLBACKS=off) or +norace (no race check: CLXFER_RACES=off), norace last; +proto
#   (CLXFER_FORMAT=perfetto) and +shm (the trace in /dev/shm) before them. A configuration ending
#   in `@NAME` runs the same with .gpu/libclxfer-NAME.so (another build to compare with, packed
#   beside), in the same rounds; `~X` before it sets CLXFER_ABL=X (what an ablation build reads).
set -uo pipefail
G="$PWD/.gpu"
chmod +x "$G"/* 2>/dev/null
mkdir -p /tmp/t
export TEST_PLATFORM=NVIDIA
ROUNDS=${ROUNDS:-7} THREADS=${THREADS:-1} ENQUEUES=${ENQUEUES:-200000}
CONFIGS=${CONFIGS:-none summary trace summary-all trace-all summary-off trace-off own-events own-callbacks}
OUTFILE=${STORM_OUT:-/tmp/storm-$THREADS.txt}
# STORM_CPUS: every run on these CPUs (taskset's list), where runs left to the scheduler split
# into a fast and a slow mode (the fifth visit's single thread: 12 against 18-22 µs).
pin=()
[[ -n ${STORM_CPUS:-} ]] && pin=(taskset -c "$STORM_CPUS")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in $(seq "$ROUNDS"); do
  for run in $CONFIGS; do
    a=() lib="$G/libclxfer.so" cfg=${run%@*}
    [[ $run == *@* ]] && lib="$G/libclxfer-${run##*@}.so"
    x=() dir=/tmp/t
    [[ $cfg == *~* ]] && x=(CLXFER_ABL=${cfg##*~}) cfg=${cfg%~*}
    [[ $cfg == *+norace ]] && x+=(CLXFER_RACES=off) cfg=${cfg%+norace}
    [[ $cfg == *+nocb ]] && x+=(CLXFER_TEST_CALLBACKS=off) cfg=${cfg%+nocb}
    [[ $cfg == *+shm ]] && dir=/dev/shm/clxfer-t cfg=${cfg%+shm}
    [[ $cfg == *+proto ]] && x+=(CLXFER_FORMAT=perfetto) cfg=${cfg%+proto}
    case $cfg in
      none) e=();;
      own-*) e=(); a=("${cfg#own-}");;
      *-every:*) e=(CLXFER_MODE=${cfg%-every:*} CLXFER_TEST_SAMPLE_EVERY=${cfg##*:});;
      *-all-nocb) e=(CLXFER_MODE=${cfg%-all-nocb} CLXFER_DEVICE_TIMING=all CLXFER_TEST_CALLBACKS=off);;
      *-all) e=(CLXFER_MODE=${cfg%-all} CLXFER_DEVICE_TIMING=all);;
      *-off) e=(CLXFER_MODE=${cfg%-off} CLXFER_DEVICE_TIMING=off);;
      *) e=(CLXFER_MODE=$cfg);;
    esac
    [[ $cfg == none || $cfg == own-* ]] || e=(LD_PRELOAD="$lib" CLXFER_REPORT=/tmp/t/report.txt "${e[@]}" "${x[@]}")
    rm -rf /tmp/t/* /dev/shm/clxfer-t
    mkdir -p "$dir"
    out=$(env "${e[@]}" CLXFER_DIR="$dir" timeout 120 ${pin[@]+"${pin[@]}"} "$G/clxfer-storm" "$ENQUEUES" "$THREADS" "${a[@]}" 2>/dev/null)
    # The report's "enqueue's own cost": the mean time the program's non-blocking enqueues that
    # stage nothing spent inside the driver, µs (where the driver's own calls wait for its lock).
    driver=$(tr -s ' \n' ' ' < /tmp/t/report.txt 2>/dev/null \
      | grep -oE "enqueue's own cost \([0-9.]+ (ns|µs|ms) per call" | head -1 \
      | awk '{v=substr($4, 2); u=$5; if (u=="ns") v/=1000; if (u=="ms") v*=1000; print "driver_enqueue_us", v}')
    echo "$round $run $(echo "$out" | grep us_per_enqueue | tr '\n' ' ')$driver"
    [[ $round == 1 ]] && echo "$out" | grep "^toggle" >&2
    [[ $round == 1 && -f /tmp/t/report.txt ]] && grep -h "own cost\|records dropped" -A4 /tmp/t/report.txt | sed "s/^/  $run: /" >&2
  done
done | tee "$OUTFILE"
python3 - "$OUTFILE" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(dict)
cpu = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 4 and p[2] == 'us_per_enqueue':
        d[p[1]][int(p[0])] = float(p[3])
        if len(p) >= 6:
            cpu[p[1]][int(p[0])] = float(p[5])
# Without `none` (a call of own-events and the clxfer runs only) the paired columns are nan.
nan = float('nan')
none, cnone = d.get('none', {}), cpu.get('none', {})
for cfg, v in d.items():
    diffs = [v[r] - none[r] for r in v if r in none]
    paired = statistics.median(diffs) if diffs else nan
    c = cpu.get(cfg, {})
    cdiffs = [c[r] - cnone[r] for r in c if r in cnone]
    cp = statistics.median(cdiffs) if cdiffs else nan
    print(f"{cfg:18s} median {statistics.median(v.values()):7.2f}  paired {paired:+6.2f}"
          f"   caller CPU paired {cp:+6.2f}")
PY
