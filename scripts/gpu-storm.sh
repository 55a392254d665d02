#!/usr/bin/env bash
# The storm's cost on NVIDIA (docs/PERFORMANCE.md, "NVIDIA H200"): 200,000 4 KiB enqueues, one
# thread, through the machine's default loader (CUDA's) with clxfer preloaded, 7 interleaved rounds
# of: no clxfer, summary, trace, both with CLXFER_DEVICE_TIMING=off, and the storm doing itself what
# device timing needs (an event per command; a callback per command), with no clxfer. Runs on the
# device machine in the repository root with .gpu/ packed by `scripts/gpu-truth pack`; prints one
# line per run ("ROUND CONFIG us_per_enqueue N") and the medians and paired differences to none.
set -uo pipefail
G="$PWD/.gpu"
chmod +x "$G"/* 2>/dev/null
mkdir -p /tmp/t
export TEST_PLATFORM=NVIDIA
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2 3 4 5 6 7; do
  for cfg in none summary trace summary-off trace-off own-events own-callbacks; do
    case $cfg in
      none) e=(); a=();;
      summary|trace) e=(LD_PRELOAD="$G/libclxfer.so" CLXFER_MODE=$cfg); a=();;
      *-off) e=(LD_PRELOAD="$G/libclxfer.so" CLXFER_MODE=${cfg%-off} CLXFER_DEVICE_TIMING=off); a=();;
      own-*) e=(); a=("${cfg#own-}");;
    esac
    rm -f /tmp/t/*
    r=$(env "${e[@]}" CLXFER_DIR=/tmp/t timeout 120 "$G/clxfer-storm" 200000 1 "${a[@]}" 2>/dev/null | grep us_per_enqueue)
    echo "$round $cfg $r"
  done
done | tee /tmp/storm.txt
python3 - <<'PY'
import collections, statistics
d = collections.defaultdict(dict)
for line in open('/tmp/storm.txt'):
    p = line.split()
    if len(p) == 4 and p[2] == 'us_per_enqueue':
        d[p[1]][int(p[0])] = float(p[3])
none = d['none']
for cfg, v in d.items():
    paired = statistics.median([v[r] - none[r] for r in v if r in none])
    print(f"{cfg:15s} median {statistics.median(v.values()):7.2f}  paired {paired:+6.2f}")
PY
