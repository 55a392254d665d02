"""Compares clxfer's classifications and device times with what tests/programs/gpu_scenarios.c
measured itself, scenario by scenario (docs/ground-truth.md). Used by scripts/gpu-truth.
Usage: gpu_truth.py SCENARIO_OUTPUT TRACE [TITLE]   -> a Markdown section on stdout, exit 1 when a
target is missed (a classification that disagrees with the bandwidth, a device time off by more than
5%, a device slice before its enqueue)."""

import json
import re
import sys

MIB = 1 << 20
LARGE = 4 * MIB


def read_trace(path):
    text = open(path).read().rstrip()
    if not text.endswith("]"):
        text = text.rstrip(",") + "]"
    return json.loads(text)


def main():
    scen_path, trace_path = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else trace_path
    rows = []
    for line in open(scen_path):
        if line.startswith("scenario "):
            name = line.split()[1]
            fields = dict(kv.split("=", 1) for kv in line.split()[2:])
            rows.append((name, fields))
    events = read_trace(trace_path)
    host, device = {}, {}
    for e in events:
        a = e.get("args") or {}
        if e.get("ph") != "X" or not a.get("command"):
            continue
        if e["pid"] >= 1 << 31:
            device[a["command"]] = e
        else:
            host[a["command"]] = e
    end = next((e for e in events if e.get("name") == "clxfer trace end"), {})
    clocks = {d["index"]: d.get("clock_mapping") for d in end.get("args", {}).get("devices", [])}

    out, failures = [], []
    table = []
    for name, f in rows:
        k = int(f["enqueue"])
        h, d = host.get(k), device.get(k)
        nbytes = int(f["bytes"])
        own_dev_ns = int(f["device_ns"])
        own_gbps = float(f["device_gbps"]) if own_dev_ns else float(f["host_gbps"])
        cls = f"{h['args'].get('direction')} {h['args'].get('path')}" if h and "path" in h["args"] else "-"
        rules = ", ".join(h["args"].get("rule_ids", [])) if h else ""
        api_ok = h is not None and h["args"].get("api") == f["api"]
        if not api_ok:
            failures.append(f"{name}: command {k} in the trace is not {f['api']}")
        dev_dur_ns = None
        unavailable = False
        if d is not None:
            unavailable = d["args"].get("device_time") == "unavailable"
            dev_dur_ns = round(d["dur"] * 1000)
        clx_gbps = nbytes / dev_dur_ns if dev_dur_ns and not unavailable else None
        # Timing truth: the same command's duration, clxfer's against the program's own.
        if own_dev_ns and dev_dur_ns and not unavailable:
            err = abs(dev_dur_ns - own_dev_ns) / own_dev_ns
            timing = f"{100 * err:.2f}%"
            if err > 0.05:
                failures.append(f"{name}: device time {dev_dur_ns} ns against the program's {own_dev_ns} ns")
        elif unavailable or not own_dev_ns:
            timing = "unavailable (both)" if not own_dev_ns else "unavailable"
        else:
            timing = "-"
        if d is not None and h is not None and d["ts"] < h["ts"]:
            failures.append(f"{name}: device slice starts before its enqueue")
        table.append([name, f["api"].replace("clEnqueue", ""), nbytes, cls, rules, clx_gbps, own_gbps,
                      float(f["host_gbps"]), timing])

    # Bandwidth agreement for transfers of 4 MiB or more: pinned at >= 70% and staged at <= 40% of
    # the run's best pinned bandwidth (the program's own figures).
    def own(row):
        return row[6]
    pinned = [own(r) for r in table if r[3].endswith(" pinned") and r[2] >= LARGE]
    best = max(pinned) if pinned else None
    checked = agreed = 0
    for r in table:
        verdict = ""
        if best and r[2] >= LARGE and r[3].split(" ")[-1] in ("pinned", "staged"):
            share = own(r) / best
            ok = share >= 0.7 if r[3].endswith("pinned") else share <= 0.4
            checked += 1
            agreed += ok
            verdict = f"{'yes' if ok else '**NO**'} ({100 * share:.0f}%)"
            if not ok:
                failures.append(f"{r[0]}: {r[3]} at {100 * share:.0f}% of the best pinned {best:.1f} GB/s")
        r.append(verdict)

    out.append(f"### {title}\n")
    out.append(f"Clock mapping: {', '.join(f'device #{i}: {c}' for i, c in sorted(clocks.items())) or '-'}. "
               f"Best pinned bandwidth of this run (the program's own, transfers of 4 MiB or more): "
               f"{best:.1f} GB/s. Agreement for pinned/staged transfers of 4 MiB or more: "
               f"{agreed}/{checked}.\n" if best else "No pinned transfer of 4 MiB or more.\n")
    out.append("| scenario | command | bytes | clxfer: class | rules cited | clxfer device GB/s | "
               "program's GB/s | program's host GB/s | device time vs program's | agrees |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        size = f"{r[2] / MIB:.0f} MiB" if r[2] >= MIB else f"{r[2] // 1024} KiB"
        clx = f"{r[5]:.2f}" if r[5] else "unavailable"
        out.append(f"| {r[0]} | {r[1]} | {size} | {r[3]} | {r[4]} | {clx} | {r[6]:.2f} | {r[7]:.2f} | "
                   f"{r[8]} | {r[9]} |")
    if failures:
        out.append("\nMissed:\n" + "\n".join(f"- {x}" for x in failures))
    print("\n".join(out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
