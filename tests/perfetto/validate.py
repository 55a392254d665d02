"""Decodes a Perfetto protobuf trace clxfer wrote with Perfetto's own schema (PyPI `perfetto`:
perfetto/protos/perfetto/trace/perfetto_trace_pb2.py), checks the rules its trace processor
relies on, and compares what it holds with the JSON form of the same trace: slices per track and
their times, flows, counters, event names. Timestamps are resolved as Perfetto's clock tracker
resolves them: on the packet's clock or its sequence's default, an incremental clock's value being
its last one plus the packet's delta.

Usage: python validate.py TRACE.pftrace TRACE.json
Prints a JSON summary on stdout; exits 1 with the violations on stderr if any rule is broken."""
import collections
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

pf_path, json_path = sys.argv[1:3]


def packets(data):
    """The file's packets, each parsed alone: a file cut short (a killed program) is read up to
    its last whole packet, as Perfetto reads it."""
    at, out = 0, []
    while at < len(data):
        def varint():
            nonlocal at
            v, shift = 0, 0
            while True:
                if at >= len(data):
                    raise EOFError
                b = data[at]
                at += 1
                v |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    return v
        try:
            key = varint()
            length = varint()
        except EOFError:
            break
        if key != (1 << 3 | 2) or at + length > len(data):
            break
        out.append(pb.TracePacket.FromString(data[at:at + length]))
        at += length
    return out, at == len(data)


with open(pf_path, "rb") as f:
    all_packets, whole = packets(f.read())


class Trace:
    packet = all_packets


trace = Trace()
TE = pb.TrackEvent

violations = []
seqs = set()
interned = collections.defaultdict(lambda: {"names": {}, "cats": {}, "keys": {}, "strings": {}})
tracks = {}
open_slices = collections.defaultdict(list)
slices = collections.Counter()
flow_starts, flow_ends = collections.Counter(), collections.Counter()
names_used = set()
counters = collections.Counter()
begins = collections.Counter()
# Per sequence: clock id -> [reading at the snapshot, incremental, last value]; the default clock.
clocks = collections.defaultdict(dict)
default_clock = {}


def resolve(i, seq, p):
    """The packet's time in ns on clxfer's clock (id 64, 0 at its start)."""
    cid = p.timestamp_clock_id or default_clock.get(seq, 64)
    table = clocks[seq]
    if cid not in table or 64 not in table:
        bad(i, f"a timestamp on clock {cid}, which its sequence never described")
        return p.timestamp
    at, incremental, last = table[cid]
    value = p.timestamp
    if incremental:
        value = last + p.timestamp
        table[cid][2] = value
    return value - at + table[64][0]


def bad(i, what):
    violations.append(f"packet {i}: {what}")


def annotation_ok(i, tables, a, top):
    if top and not a.HasField("name_iid") and not a.HasField("name"):
        bad(i, "a top-level annotation without a name")
    if a.HasField("name_iid") and a.name_iid not in tables["keys"]:
        bad(i, f"annotation name iid {a.name_iid} used before it is interned")
    if a.HasField("string_value_iid") and a.string_value_iid not in tables["strings"]:
        bad(i, f"string iid {a.string_value_iid} used before it is interned")
    for d in a.dict_entries:
        if not d.HasField("name"):
            bad(i, "a dictionary entry without a name")
        annotation_ok(i, tables, d, False)
    for v in a.array_values:
        annotation_ok(i, tables, v, False)


for i, p in enumerate(trace.packet):
    if not p.HasField("trusted_packet_sequence_id"):
        bad(i, "no sequence id")
    seq = p.trusted_packet_sequence_id
    first = seq not in seqs
    seqs.add(seq)
    if first:
        if not (p.first_packet_on_sequence and p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED):
            bad(i, "the first packet does not start the sequence afresh")
        snap = {c.clock_id: c for c in p.clock_snapshot.clocks}
        if 64 not in snap or p.clock_snapshot.primary_trace_clock != pb.BUILTIN_CLOCK_MONOTONIC:
            bad(i, f"no snapshot of clxfer's clock onto CLOCK_MONOTONIC: {snap}")
        default = p.trace_packet_defaults.timestamp_clock_id
        if default not in snap or not snap[default].is_incremental or snap[default].timestamp != snap[64].timestamp:
            bad(i, "timestamps are not deltas on an incremental twin of clxfer's clock by default")
    if p.HasField("clock_snapshot"):
        for c in p.clock_snapshot.clocks:
            if c.is_incremental and not 64 <= c.clock_id < 128:
                bad(i, f"clock {c.clock_id} is incremental but not sequence-scoped")
            clocks[seq][c.clock_id] = [c.timestamp, c.is_incremental, c.timestamp]
    if p.HasField("trace_packet_defaults"):
        default_clock[seq] = p.trace_packet_defaults.timestamp_clock_id
    ts = resolve(i, seq, p) if p.HasField("timestamp") else None
    tables = interned[seq]
    if p.HasField("interned_data"):
        d = p.interned_data
        for table, entries in (("names", d.event_names), ("cats", d.event_categories),
                               ("keys", d.debug_annotation_names), ("strings", d.debug_annotation_string_values)):
            for e in entries:
                text = e.name if table != "strings" else e.str.decode()
                if e.iid in tables[table] and tables[table][e.iid] != text:
                    bad(i, f"{table} iid {e.iid} interned twice with different texts")
                tables[table][e.iid] = text
    if p.HasField("track_descriptor"):
        t = p.track_descriptor
        if t.HasField("thread"):
            tracks[t.uuid] = ("thread", t.thread.pid & 0xFFFFFFFF, t.thread.tid)
        elif t.HasField("process"):
            tracks[t.uuid] = ("process", t.process.pid & 0xFFFFFFFF, None)
        elif t.HasField("counter"):
            tracks[t.uuid] = ("counter", t.name, t.parent_uuid)
        else:
            tracks[t.uuid] = ("global", t.name, None)
    if p.HasField("track_event"):
        e = p.track_event
        refers = e.HasField("name_iid") or len(e.category_iids) or len(e.debug_annotations)
        if (refers and not p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE):
            bad(i, "a track event with interned references that does not say it needs the sequence's state")
        if e.track_uuid not in tracks:
            bad(i, f"track {e.track_uuid} used before its descriptor")
            continue
        if e.HasField("name_iid"):
            if e.name_iid not in tables["names"]:
                bad(i, f"event name iid {e.name_iid} used before it is interned")
            else:
                names_used.add(tables["names"][e.name_iid])
        elif e.HasField("name"):
            names_used.add(e.name)
        for c in e.category_iids:
            if c not in tables["cats"]:
                bad(i, f"category iid {c} used before it is interned")
        for a in e.debug_annotations:
            annotation_ok(i, tables, a, True)
        kind, x, y = tracks[e.track_uuid]
        if e.type == TE.TYPE_SLICE_BEGIN:
            open_slices[e.track_uuid].append(ts)
        elif e.type == TE.TYPE_SLICE_END:
            if not open_slices[e.track_uuid]:
                bad(i, f"a slice end without a begin on track {e.track_uuid}")
            else:
                begun = open_slices[e.track_uuid].pop()
                if ts < begun:
                    bad(i, "a slice that ends before it begins")
                slices[(x, y)] += 1
                begins[(x, y, begun, ts - begun)] += 1
        elif e.type == TE.TYPE_COUNTER:
            if kind != "counter":
                bad(i, "a counter value on a track that is not a counter")
            counters[x] += 1
        for f_id in e.flow_ids:
            flow_starts[f_id] += 1
        for f_id in e.terminating_flow_ids:
            flow_ends[f_id] += 1

for uuid, stack in open_slices.items():
    if stack and whole:
        violations.append(f"track {uuid}: {len(stack)} slice(s) begun and never ended")
for f_id, n in flow_starts.items():
    if n != 1 or (whole and flow_ends.get(f_id) != 1):
        violations.append(f"flow {f_id:#x}: {n} start(s), {flow_ends.get(f_id, 0)} end(s)")
for f_id in flow_ends:
    if f_id not in flow_starts:
        violations.append(f"flow {f_id:#x} ends without a start")

# The JSON form: the same slices per track, flows, counters and names.
events = json.load(open(json_path))
want_slices = collections.Counter((e["pid"], e["tid"]) for e in events if e.get("ph") == "X")
if want_slices != slices:
    violations.append(f"slices per track differ from the JSON's: {dict(want_slices)} against {dict(slices)}")
ns = lambda us: round(us * 1000)
want_begins = collections.Counter((e["pid"], e["tid"], ns(e["ts"]), ns(e["dur"])) for e in events if e.get("ph") == "X")
if want_begins != begins:
    diff = list((want_begins - begins).items())[:3], list((begins - want_begins).items())[:3]
    violations.append(f"slice times differ from the JSON's: only in the JSON, only in the protobuf: {diff}")
want_flows = len({(e["name"], e["id"]) for e in events if e.get("ph") == "s"})
if want_flows != len(flow_starts):
    violations.append(f"{len(flow_starts)} flows, the JSON has {want_flows}")
want_names = {e["name"] for e in events if e.get("ph") in ("X", "i", "s", "f", "C")}
if want_names != names_used:
    violations.append(f"event names differ: {sorted(want_names ^ names_used)[:10]}")
want_counters = collections.Counter(e["name"] for e in events if e.get("ph") == "C")
if want_counters != counters:
    violations.append(f"counter samples differ: {dict(want_counters)} against {dict(counters)}")

print(json.dumps({
    "packets": len(trace.packet), "whole": whole, "slices": sum(slices.values()), "flows": len(flow_starts),
    "tracks": len(tracks), "names": len(names_used), "sequences": len(seqs),
    "counters": sum(counters.values()), "violations": len(violations),
}))
if violations:
    print("\n".join(violations[:50]), file=sys.stderr)
    sys.exit(1)
