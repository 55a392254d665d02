#!/usr/bin/env bash
# Sampled device timing against `all` on the GPU scenario grid (issue #27): the scenario program
# (tests/programs/gpu_scenarios.c) preloaded with clxfer in summary mode, CLXFER_DEVICE_TIMING=all
# then on, ROUNDS times each, interleaved; prints each row's median GB/s in both and their ratio.
# Runs on the device machine with .gpu/ packed by `scripts/gpu-truth pack`.
set -uo pipefail
G="$PWD/.gpu"
chmod +x "$G"/* 2>/dev/null
D=/tmp/sampling; rm -rf "$D"; mkdir -p "$D"
for round in $(seq "${ROUNDS:-2}"); do
  for timing in all on; do
    env LD_PRELOAD="$G/libclxfer.so" CLXFER_MODE=summary CLXFER_DEVICE_TIMING=$timing \
      CLXFER_REPORT="$D/$timing-$round.json" SCEN_MIB="${SCEN_MIB:-64}" timeout 240 \
      "$G/clxfer-gpu-scenarios" > "$D/$timing-$round.txt" 2>&1 || echo "$timing $round: exit $?"
  done
done
python3 - "$D" <<'PY'
import glob, json, statistics, sys, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
timed = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    timing = f.rsplit("/", 1)[1].split("-")[0]
    r = json.load(open(f))
    for d in r["devices"]:
        for row in d["transfers"] + d["operations"]:
            if row["median_gbps"] and row["bytes"] >= (1 << 20):
                key = (d["index"], row.get("kind") or "", row["direction"], row["path"])
                rows[key][timing].append(row["median_gbps"])
    o = r.get("overhead") or {}
    timed[timing].append((o.get("timed_commands"), o.get("sampled_out")))
worst = 0
for key, by in sorted(rows.items()):
    a, o = by.get("all"), by.get("on")
    if not a or not o:
        print(key, "only in", list(by)); continue
    ratio = statistics.median(o) / statistics.median(a)
    worst = max(worst, abs(ratio - 1))
    print(f"{str(key):45s} all {statistics.median(a):8.2f}  on {statistics.median(o):8.2f}  ratio {ratio:.3f}")
print("timed, sampled out:", dict(timed))
print(f"largest difference: {worst*100:.1f}%")
PY
