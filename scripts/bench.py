"""The benchmark driver of scripts/bench (see there). Python for the bookkeeping only: every
figure comes from a real run of a real program under the real ICD loader and PoCL."""

import datetime
import glob
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "target/release/libclxfer.so")
STORM = os.path.join(ROOT, "target/release/clxfer-storm")
# `scripts/bench instructions [enqueues]`: the instruction counts alone (a few minutes), printed.
ONLY_INSTRUCTIONS = len(sys.argv) > 1 and sys.argv[1] == "instructions"
ARGS = sys.argv[2:] if ONLY_INSTRUCTIONS else sys.argv[1:]
ROUNDS = int(ARGS[0]) if len(ARGS) > 0 and not ONLY_INSTRUCTIONS else 5
ENQUEUES = int(ARGS[-1]) if ARGS else 200_000

# name → environment (the storm's own and clpeak's)
CONFIGS = {"none": {}}
for load, var in [("layer", "OPENCL_LAYERS"), ("preload", "LD_PRELOAD")]:
    for mode in ["off", "summary", "trace"]:
        CONFIGS[f"{load} {mode}"] = {var: LIB, "CLXFER_MODE": mode}
# Every command timed (CLXFER_DEVICE_TIMING=all, the default samples), and clxfer's own work
# without the driver's charge for device timing (profiling, events), which the storm's "own" rows
# measure alone.
for mode in ["summary", "trace"]:
    CONFIGS[f"layer {mode} all"] = {"OPENCL_LAYERS": LIB, "CLXFER_MODE": mode,
                                    "CLXFER_DEVICE_TIMING": "all"}
for mode in ["summary", "trace"]:
    CONFIGS[f"layer {mode} untimed"] = {"OPENCL_LAYERS": LIB, "CLXFER_MODE": mode,
                                        "CLXFER_DEVICE_TIMING": "off"}
# The trace as Perfetto's protobuf (CLXFER_FORMAT=perfetto) instead of JSON.
CONFIGS["layer trace pftrace"] = {"OPENCL_LAYERS": LIB, "CLXFER_MODE": "trace", "CLXFER_FORMAT": "perfetto"}
# The race check's own cost (issue #25): the same layer with CLXFER_RACES=off, counted in
# instructions only.
RACES_OFF = {f"layer {mode} no race": {"OPENCL_LAYERS": LIB, "CLXFER_MODE": mode,
                                       "CLXFER_RACES": "off"} for mode in ["summary", "trace"]}
# The PoCL storm also runs without clxfer but with profiling on its queue (STORM_MODE: the
# storm's own argument, not an environment variable): the driver's own charge for device timing,
# in the same rounds, so that what clxfer adds beyond it is a paired figure.
OWN_PROFILING = {"STORM_MODE": "profiling"}
STORM_CONFIGS = dict(CONFIGS, **{"own profiling": OWN_PROFILING})


def env_for(extra, out_dir):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("CLXFER_") or k in ("OPENCL_LAYERS", "LD_PRELOAD"))}
    env.update(extra)
    env["CLXFER_DIR"] = out_dir
    return env


def run(cmd, extra):
    """Runs cmd; returns (stdout, trace bytes written, peak RSS of the child in KiB)."""
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = subprocess.run(cmd, env=env_for(extra, out), capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return p.stdout, size, max(rss, before)


# The test ICD (tests/programs/testicd.c), for the storm's usm mode: scripts/bench builds it.
TEST_ICD_VENDORS = os.path.join(ROOT, "target/release/bench-vendors")


def storm(threads, extra, mode=None):
    extra = dict(extra)
    mode = extra.pop("STORM_MODE", mode)
    cmd = [STORM, str(ENQUEUES // threads), str(threads)] + ([mode] if mode else [])
    if mode == "usm":
        extra = dict(extra, OCL_ICD_VENDORS=TEST_ICD_VENDORS, TEST_PLATFORM="clxfer test ICD")
    out, size, _ = run(cmd, extra)
    us = float(re.search(r"^us_per_enqueue (\S+)", out, re.M).group(1))
    cpu = float(re.search(r"cpu_us_per_enqueue (\S+)", out).group(1))
    rss = int(re.search(r"max_rss_kib (\d+)", out).group(1))
    total = (ENQUEUES // threads) // 4 * 4 * threads
    return {"us": us, "cpu": cpu, "bytes": size / total, "rss": rss / 1024}


def sampled_every(extra, usm):
    """Sampled device timing's budget is time: under valgrind, ~50 times slower, it would time
    nearly every command. The rate the same storm gets natively (one small command timed in N,
    from its report's own-cost counts) is pinned instead (CLXFER_TEST_SAMPLE_EVERY)."""
    with tempfile.TemporaryDirectory() as out:
        report = os.path.join(out, "report.json")
        e = dict(extra, CLXFER_MODE="summary", CLXFER_REPORT=report)
        cmd = [STORM, str(ENQUEUES), "1"] + (["usm"] if usm else [])
        if usm:
            e = dict(e, OCL_ICD_VENDORS=TEST_ICD_VENDORS, TEST_PLATFORM="clxfer test ICD")
        subprocess.run(cmd, env=env_for(e, out), capture_output=True, check=True)
        o = json.load(open(report))["overhead"]
        return max(1, round((o["timed_commands"] + o["sampled_out"]) / max(1, o["timed_commands"])))


# The command graph's code (issue #24) and the replay of fixes over it (issue #26): their files
# (inlined code keeps its source file under callgrind) and their functions (what they call
# inline). The race check's files (graph/clock.rs, graph/race.rs) are counted apart, by
# CLXFER_RACES=off.
GRAPH = re.compile(r"/src/(?:graph/(?:order|events|mod)|layer/intercept/graph|report/(?:bounds|timeline))\.rs:"
                   r"|:clxfer::(?:graph::(?:order|events)|layer::intercept::graph|report::(?:bounds|timeline))::")
REPLAY = re.compile(r"/src/report/replay\.rs:|:clxfer::report::replay::")


def graph_part(path):
    """Instructions of one thread's callgrind file that ran the command graph's code, and the
    replay's."""
    p = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path], capture_output=True, text=True)
    parts = [0, 0]
    for l in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s", l)
        if m and REPLAY.search(l):
            parts[1] += int(m.group(1).replace(",", ""))
        elif m and GRAPH.search(l):
            parts[0] += int(m.group(1).replace(",", ""))
    return parts


def clxfer_own(text):
    """clxfer's own instructions in one callgrind file's text: the self cost of libclxfer.so's functions
    and the inclusive cost of their calls into libc and ld.so (its locks, clock reads,
    allocations). Its calls into the driver (and what the driver does in its own threads) are the
    driver's share: every thread's count, less none's, less this."""
    obs, me = {}, "libclxfer.so"
    ob = call_ob = None
    in_call = False
    own = 0
    for line in text.splitlines():
        c = line[:1]
        if c and (c.isdigit() or c in "+-*"):
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            mine = ob is not None and me in ob
            if in_call:
                # A call's line: its inclusive cost, counted where clxfer calls the C library.
                callee = call_ob or ob
                if mine and me not in callee and re.search(r"libc\.so|ld-linux|libgcc_s", callee):
                    own += cost
                in_call, call_ob = False, None
            elif mine:
                own += cost
            continue
        m = re.match(r"(c?ob)=\((\d+)\)(.*)", line)
        if m:
            kind, i, name = m.groups()
            if name.strip():
                obs[i] = name.strip()
            if kind == "ob":
                ob, call_ob = obs.get(i), None
            else:
                call_ob = obs.get(i)
        elif line.startswith("fn="):
            call_ob = None
        elif line.startswith("calls="):
            in_call = True
    return own


def instructions(extra, usm, graph=False):
    """Instructions per enqueue under callgrind, deterministic where this VM's clock is not: every
    thread counted, the calling thread alone (the one running the storm: the program's own
    thread, whose every instruction delays its next enqueue), and clxfer's writer thread (which
    renders the trace or keeps the report: 0 without clxfer). 2n enqueues minus n, so start-up
    and exit cancel out (n = 20,000 USM enqueues, or 8,000 on PoCL, whose own work is counted too
    and is slower under valgrind). Sampled configurations run at their native rate
    ([`sampled_every`]). With `graph`, also the command graph's part of the calling and writer
    threads ([`graph_part`])."""
    n = 20_000 if usm else 8_000
    # glibc's per-thread cache made large enough that PoCL's frees never spill: without it, where
    # PoCL's freed blocks land (and so its malloc_consolidate work) moved its counts by ~490 per
    # enqueue between runs of the same configuration; with it they repeat within ~25.
    extra = dict(extra, GLIBC_TUNABLES="glibc.malloc.tcache_count=1000")
    sampled = any(k in extra for k in ("OPENCL_LAYERS", "LD_PRELOAD")) and \
        extra.get("CLXFER_MODE") != "off" and "CLXFER_DEVICE_TIMING" not in extra
    if sampled:
        extra = dict(extra, CLXFER_TEST_SAMPLE_EVERY=str(sampled_every(extra, usm)))
    if usm:
        extra = dict(extra, OCL_ICD_VENDORS=TEST_ICD_VENDORS, TEST_PLATFORM="clxfer test ICD")
    counts = []
    for count in (n, 2 * n):
        with tempfile.TemporaryDirectory() as out:
            cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
                   f"--callgrind-out-file={out}/callgrind.out", STORM, str(count), "1"] + (["usm"] if usm else [])
            p = subprocess.run(cmd, env=env_for(extra, out), capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
            total = int(re.search(r"Collected : (\d+)", p.stderr).group(1))
            caller, writer, graph_caller, graph_writer = None, 0, [0, 0], [0, 0]
            clxfer = 0
            for f in glob.glob(f"{out}/callgrind.out-*"):
                text = open(f, errors="replace").read()
                clxfer += clxfer_own(text)
                own = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
                if re.search(r"^c?fn=\(\d+\) storm$", text, re.M):
                    caller = own
                    graph_caller = graph_part(f) if graph else [0, 0]
                # The writer thread runs `writer::run`; the main thread only spawns it.
                elif re.search(r"^c?fn=\(\d+\) clxfer::sink::writer::run\b", text, re.M) and own > writer:
                    writer = own
                    graph_writer = graph_part(f) if graph else [0, 0]
            if caller is None:
                sys.exit(f"bench: no thread ran the storm in {cmd}")
            counts.append((total, caller, writer, *graph_caller, *graph_writer, clxfer))
    return tuple((b - a) / n for a, b in zip(*counts))


def calls(extra):
    out, _, _ = run([STORM, "2000000", "calls"], extra)
    return {"ns": float(re.search(r"ns_per_call (\S+)", out).group(1))}


CLPEAK_KEYS = ["enqueueWriteBuffer", "enqueueReadBuffer",
               "enqueueWriteBuffer non-blocking", "enqueueReadBuffer non-blocking"]


def clpeak(extra):
    out, _, _ = run(["clpeak", "--transfer-bandwidth"], extra)
    got = {}
    for key in CLPEAK_KEYS:
        m = re.search(r"^\s*" + re.escape(key) + r"\s*:\s*([\d.]+)", out, re.M)
        got[key] = float(m.group(1)) if m else float("nan")
    return got


def bench(title, fn, metric, unit, rounds, configs=CONFIGS):
    """Interleaved rounds; prints and returns the table lines. "paired" is the median over the
    rounds of each round's difference to none (this VM's speed drifts from round to round)."""
    results = {c: [] for c in configs}
    for _ in range(rounds):
        for c, extra in configs.items():
            results[c].append(fn(extra))
    base = results["none"]
    lines = [f"{title}, {rounds} interleaved rounds",
             f"  {'configuration':<22}{'median ' + unit:>20}{'added':>10}{'paired':>9}{'median ratio':>14}"
             + ("" if metric != "us" else f"{'caller CPU us':>15}{'trace B/enq':>13}{'peak RSS MiB':>14}")]
    base_med = statistics.median(r[metric] for r in base)
    for c, rs in results.items():
        med = statistics.median(r[metric] for r in rs)
        ratio = statistics.median(r[metric] / b[metric] for r, b in zip(rs, base))
        paired = statistics.median(r[metric] - b[metric] for r, b in zip(rs, base))
        line = f"  {c:<22}{med:>20.3f}{med - base_med:>+10.3f}{paired:>+9.3f}{ratio:>14.3f}"
        if metric == "us":
            line += f"{statistics.median(r['cpu'] for r in rs):>15.3f}"
            line += f"{statistics.median(r['bytes'] for r in rs):>13.0f}"
            line += f"{statistics.median(r['rss'] for r in rs):>14.1f}"
        lines.append(line)
    if "own profiling" in results:
        # What clxfer adds beyond the driver's own charge for profiling, paired round by round.
        own = results["own profiling"]
        beyond = [f"{c} {statistics.median(r[metric] - o[metric] for r, o in zip(results[c], own)):+.3f}"
                  for c in results if c.startswith("layer") and not c.endswith(("off", "untimed"))]
        lines.append(f"  beyond the driver's own profiling charge (paired, {unit}): " + ", ".join(beyond))
    for l in lines + [""]:
        print(l, flush=True)
    return lines, results


def instruction_table():
    """The callgrind table's lines (see `instructions`)."""
    names = ["none", "layer off", "layer summary", "layer summary all", "layer summary no race",
             "layer trace", "layer trace all", "layer trace no race", "layer trace pftrace"]
    envs = dict(CONFIGS, **RACES_OFF)
    GRAPHED = {"layer summary", "layer trace"}
    usm = {c: instructions(envs[c], True, c in GRAPHED) for c in names}
    pocl = {c: instructions(envs[c], False, c in GRAPHED) for c in names}
    lines = ["instructions per enqueue (callgrind; deterministic), every thread, the calling thread "
             "alone and clxfer's writer thread: the usm storm, and the 1-thread PoCL storm (PoCL's "
             "own work included); `driver`: what clxfer's presence added outside its own code (every "
             "thread's added count less clxfer's own functions and their calls into libc)",
             f"  {'configuration':<24}{'usm':>10}{'added':>9}{'calling':>10}{'added':>9}{'writer':>9}{'driver':>8}"
             f"{'PoCL storm':>12}{'added':>9}{'calling':>10}{'added':>9}{'writer':>9}{'driver':>8}"]
    for c in names:
        line = f"  {c:<24}"
        for storm_ in (usm, pocl):
            (total, caller, writer, *_, own), (total0, caller0, *_) = storm_[c], storm_["none"]
            line += f"{total:>{12 if storm_ is pocl else 10}.0f}{total - total0:>+9.0f}"
            line += f"{caller:>10.0f}{caller - caller0:>+9.0f}{writer:>9.0f}{total - total0 - own:>+8.0f}"
        lines.append(line)
    # What the race check adds to each mode, against the same mode without it.
    for mode in ["summary", "trace"]:
        cells = []
        for what, storm_ in (("usm", usm), ("PoCL storm", pocl)):
            on, off = storm_[f"layer {mode}"], storm_[f"layer {mode} no race"]
            cells.append(f"{what} {on[0] - off[0]:+.0f} ({(on[0] - off[0]) / off[0]:+.1%} of every "
                         f"thread), calling thread {on[1] - off[1]:+.0f} ({(on[1] - off[1]) / off[1]:+.1%})")
        lines.append(f"  the race check in {mode} mode: " + "; ".join(cells))
    # What the command graph costs (issue #24) and the replay over it (#26), from the same runs.
    for mode in ["summary", "trace"]:
        cells = []
        for what, storm_ in (("usm", usm), ("PoCL storm", pocl)):
            total, _, _, gc, rc, gw, rw, _ = storm_[f"layer {mode}"]
            added = total - storm_["none"][0]
            cells.append(f"{what} {gc:.0f} calling + {gw:.0f} writer ({(gc + gw) / added:.1%} of what "
                         f"clxfer adds), replay {rc + rw:.0f} ({(rc + rw) / added:.1%})")
        lines.append(f"  the command graph in {mode} mode: " + "; ".join(cells))
    for l in lines + [""]:
        print(l, flush=True)
    return lines + [""]


def main():
    if ONLY_INSTRUCTIONS:
        instruction_table()
        return
    out = []
    for threads in (1, 4):
        lines, _ = bench(f"storm: {ENQUEUES} x 4 KiB write/read/map/unmap enqueues, {threads} thread(s)",
                         lambda e, t=threads: storm(t, e), "us", "us/enqueue", ROUNDS, STORM_CONFIGS)
        out += lines + [""]
    # clxfer's own cost, on a driver that does nothing but copy (PoCL multiplies any work between
    # enqueues, see the spin rows below).
    lines, _ = bench(f"usm: {ENQUEUES} x 4 KiB USM memcpys on the test ICD (its commands complete at once: "
                     f"clxfer's own cost per enqueue, a callback per command included), 1 thread",
                     lambda e: storm(1, e, "usm"), "us", "us/enqueue", ROUNDS)
    out += lines + [""]
    out += instruction_table()
    # What PoCL itself charges for device timing (the storm timing its commands on its own), and for
    # any work between enqueues (the storm spinning after each one).
    own = [("none", []), ("own profiling", ["profiling"]), ("own events", ["events"]),
           ("own callbacks", ["callbacks"]),
           ("own 300 ns spin", ["spin:300"]), ("own 1000 ns spin", ["spin:1000"])]
    results = {c: [] for c, _ in own}
    for _ in range(ROUNDS):
        for c, extra in own:
            out_, _, _ = run([STORM, str(ENQUEUES), "1"] + extra, {})
            results[c].append([float(x) for x in re.findall(r"us_per_enqueue (\S+)", out_)])
    lines = [f"driver cost of device timing (storm without clxfer timing its commands itself: profiling "
             f"on alone; an event and four profiling queries per command, read after each clFinish or "
             f"in a callback per command), and of the program's own work between enqueues (a busy "
             f"spin after each), "
             f"{ROUNDS} rounds",
             f"  {'configuration':<18}{'median us/enqueue':>20}{'added':>10}{'caller CPU us':>15}"]
    base = statistics.median(r[0] for r in results["none"])
    for c, rs in results.items():
        med = statistics.median(r[0] for r in rs)
        lines.append(f"  {c:<18}{med:>20.3f}{med - base:>+10.3f}{statistics.median(r[1] for r in rs):>15.3f}")
    for l in lines + [""]:
        print(l, flush=True)
    out += lines + [""]
    lines, _ = bench("calls: 2000000 x (clRetainMemObject + clReleaseMemObject)", calls, "ns",
                     "ns/call", ROUNDS)
    out += lines + [""]
    # clpeak's transfers take milliseconds: the untimed configurations would tell nothing more.
    timed = {c: e for c, e in CONFIGS.items() if not c.endswith("untimed")}
    results = {c: [] for c in timed}
    rounds = max(1, ROUNDS // 2)
    for _ in range(rounds):
        for c, extra in timed.items():
            results[c].append(clpeak(extra))
    lines = [f"clpeak --transfer-bandwidth, {rounds} interleaved rounds: median GB/s (ratio to none)",
             f"  {'configuration':<22}" + "".join(f"{k.replace('enqueue', ''):>30}" for k in CLPEAK_KEYS)]
    for c, rs in results.items():
        cells = []
        for k in CLPEAK_KEYS:
            med = statistics.median(r[k] for r in rs)
            ratio = statistics.median(r[k] / b[k] for r, b in zip(rs, results["none"]))
            cells.append(f"{med:.2f} ({ratio:.3f})")
        lines.append(f"  {c:<22}" + "".join(f"{x:>30}" for x in cells))
    for l in lines + [""]:
        print(l, flush=True)
    out += lines + [""]

    # Memory over a long traced run: 2.5 million enqueues, each a host slice, a device slice and two
    # flow ends (over 10 million events).
    n = 2_500_000
    traced = {"OPENCL_LAYERS": LIB, "CLXFER_MODE": "trace"}
    long_out, size, _ = run([STORM, str(n), "1"], traced)
    long_rss = int(re.search(r"max_rss_kib (\d+)", long_out).group(1)) / 1024
    short_rss = storm_rss(10_000, traced)
    none_rss = storm_rss(10_000, {})
    # And the command graph's window over 10 million commands in summary mode (the USM storm:
    # clxfer's own memory, the test ICD's being nothing).
    usm_summary = dict(CONFIGS["layer summary"], OCL_ICD_VENDORS=TEST_ICD_VENDORS,
                       TEST_PLATFORM="clxfer test ICD")
    graph_rss = {k: storm_rss(k, usm_summary, "usm") for k in (100_000, 1_000_000, 10_000_000)}
    lines = [f"memory: {n} enqueues traced ({size / 1e9:.2f} GB of trace): peak RSS {long_rss:.1f} MiB; "
             f"{short_rss:.1f} MiB for 10000 enqueues, {none_rss:.1f} MiB without clxfer",
             f"  growth over the long run: {long_rss - short_rss:+.1f} MiB",
             "memory: the usm storm in summary mode (command graph and report): peak RSS "
             + ", ".join(f"{v:.1f} MiB over {k:,} enqueues" for k, v in graph_rss.items())]
    for l in lines + [""]:
        print(l, flush=True)
    out += lines + [""]

    crit = subprocess.run(["cargo", "bench", "--quiet", "--bench", "classify", "--bench", "writer"],
                          cwd=ROOT, capture_output=True, text=True).stdout
    lines = ["criterion (median of its samples; full report in target/criterion/):"]
    name = None
    for l in crit.splitlines():
        if re.match(r"^(classify|registry|write|writer)", l):
            name = l.strip()
        m = re.search(r"(time|thrpt):\s+\[\S+ \S+ (\S+ \S+) \S+ \S+\]", l)
        if m and name:
            lines.append(f"  {name:<72} {m.group(2)}")
    for l in lines + [""]:
        print(l, flush=True)
    out += lines

    write_doc(out)


def storm_rss(n, extra, mode=None):
    out, _, _ = run([STORM, str(n), "1"] + ([mode] if mode else []), extra)
    return int(re.search(r"max_rss_kib (\d+)", out).group(1)) / 1024


def write_doc(lines):
    path = os.path.join(ROOT, "docs/PERFORMANCE.md")
    doc = open(path).read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    when = datetime.date.today().isoformat()
    block = (f"{begin}\n`scripts/bench {ROUNDS} {ENQUEUES}`, {when}, on this machine:\n\n```\n"
             + "\n".join(lines).rstrip() + "\n```\n" + end)
    if begin in doc:
        # The first block: the current issue's section (the only one).
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, count=1,
                     flags=re.S)
    else:
        doc += "\n" + block + "\n"
    open(path, "w").write(doc)
    print(f"bench: wrote {path}")


if __name__ == "__main__":
    main()
