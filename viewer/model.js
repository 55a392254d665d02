// The viewer's model of a trace: its tracks (host threads, device queues and their lanes) with
// their slices in typed arrays sorted by start, the arrows between slices, and one point per
// transfer for the bandwidth scatter. Built once per trace; the drawing code only reads it.
'use strict';

window.clxfer = window.clxfer || {};

(function (ns) {
  // One colour per path (the same words as docs/RULES.md), then the other kinds of slice.
  const PATHS = {
    'pinned': '#2e7d32', 'staged': '#c62828', 'zero-copy': '#1565c0', 'host-copy': '#4e6cef', 'device': '#6a1b9a',
    'peer': '#00838f', 'via-host': '#ef6c00', 'none': '#757575', 'unknown': '#9e9e9e',
  };
  const KINDS = { kernel: '#f9a825', wait: '#78909c', call: '#cfd8dc' };
  // Colour index → colour: the paths in PATHS's order, then KINDS's.
  const COLORS = [...Object.values(PATHS), ...Object.values(KINDS)];
  const COLOR = Object.fromEntries([...Object.keys(PATHS), ...Object.keys(KINDS)].map((k, i) => [k, i]));
  const DEVICE_PID_BASE = 2 ** 31;
  // The fastest any device moves bytes, GB/s: a device time implying more is not a measurement
  // (src/model/device.rs MAX_GBPS; tests/viewer.rs holds the two equal).
  const MAX_GBPS = 10000;
  ns.MAX_GBPS = MAX_GBPS;
  // Host calls that wait for the device.
  const WAITS = new Set(['clFinish', 'clWaitForEvents']);

  // JSON of a trace as Perfetto reads it: a bare array may lack its closing `]`, and a killed
  // program's last event may be cut short.
  function parse(text) {
    try {
      return JSON.parse(text);
    } catch (first) {
      const t = text.trimStart();
      if (t.startsWith('[')) {
        const cut = t.slice(0, t.lastIndexOf('}') + 1).replace(/,\s*$/, '');
        for (const attempt of [cut + ']', cut.slice(0, cut.lastIndexOf('\n{')).replace(/,\s*$/, '') + ']']) {
          try { return JSON.parse(attempt); } catch (_) { /* next */ }
        }
      }
      throw first;
    }
  }

  // A host slice's keys that vary per call; the rest of a class's first slice are its members.
  const PER_CALL = new Set(['class', 'command', 'waits', 'waits_unknown', 'after',
    'after_all', 'bytes', 'host_ptr', 'projected_us', 'projected_gbps', 'host_gbps', 'region']);

  // Compact events read back whole (docs/TRACE.md, *Compact*; as clxfer's own reader,
  // src/trace/compact.rs, does): each host slice gets its class's members, each device slice
  // joined to its host slice the direction, path, bytes and enqueue-to-start it leaves to it.
  function expand(events) {
    const classes = new Map();
    const hosts = new Map();
    for (const e of events) {
      const a = e && e.ph === 'X' && e.args;
      if (!a) continue;
      if (e.pid < DEVICE_PID_BASE) {
        if (a.class === undefined) continue;
        const key = `${e.pid}/${a.class}`;
        let members = null;
        for (const k in a) if (!PER_CALL.has(k)) (members = members || {})[k] = a[k];
        if (members) {
          classes.set(key, members);
        } else {
          const m = classes.get(key);
          if (m) for (const k in m) if (!(k in a)) a[k] = m[k];
        }
        if (a.command !== undefined && a.device_time === undefined && a.path !== undefined) {
          hosts.set(`${e.pid}/${a.command}`, { ts: e.ts, direction: a.direction, path: a.path, bytes: a.bytes });
        }
      } else if (a.command !== undefined) {
        const key = `${Math.floor((e.pid - DEVICE_PID_BASE) / 256) % 0x400000}/${a.command}`;
        const h = hosts.get(key);
        if (!h) continue;
        hosts.delete(key);
        for (const k of ['direction', 'path', 'bytes']) if (!(k in a) && h[k] !== undefined) a[k] = h[k];
        if (!('device_time' in a) && !('enqueue_to_start_us' in a)) {
          a.enqueue_to_start_us = Math.max(0, Math.round((e.ts - h.ts) * 1000)) / 1000;
        }
      }
    }
  }

  // The colour of a slice: a transfer's path, a kernel, a wait (a wait call, or a blocking
  // transfer's host slice keeps its path), another call.
  function colorOf(e) {
    const a = e.args;
    if (e.pid >= DEVICE_PID_BASE) {
      if (e.name.startsWith('Kernel ')) return COLOR.kernel;
      return a && a.path in PATHS ? COLOR[a.path] : COLOR.unknown;
    }
    if (a && a.path in PATHS) return COLOR[a.path];
    if (a && a.kernel) return COLOR.kernel;
    return WAITS.has(e.name) ? COLOR.wait : COLOR.call;
  }

  // First index in sorted `arr` (from `lo`) whose value is ≥ v.
  function lowerBound(arr, v, lo = 0) {
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (arr[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Tracks: every (pid, tid) with a complete slice, host processes first, then each device's
  // queues in order, with their names from the trace's metadata.
  function tracks(events) {
    const processNames = new Map();
    const threadNames = new Map();
    const byKey = new Map();
    events.forEach((e, i) => {
      if (!e) return;
      if (e.ph === 'M') {
        if (e.name === 'process_name') processNames.set(e.pid, e.args && e.args.name);
        if (e.name === 'thread_name') threadNames.set(`${e.pid}/${e.tid}`, e.args && e.args.name);
        return;
      }
      if (e.ph !== 'X') return;
      const key = `${e.pid}/${e.tid}`;
      let t = byKey.get(key);
      if (!t) byKey.set(key, t = { key, pid: e.pid, tid: e.tid, device: e.pid >= DEVICE_PID_BASE, list: [] });
      t.list.push(i);
    });
    const list = [...byKey.values()];
    list.sort((a, b) => (a.device - b.device) || (a.pid - b.pid) || (a.tid - b.tid));
    for (const t of list) {
      const order = t.list;
      order.sort((a, b) => events[a].ts - events[b].ts);
      const n = order.length;
      t.count = n;
      t.idx = Int32Array.from(order);
      t.starts = new Float64Array(n);
      t.ends = new Float64Array(n);
      // The latest end so far: the first slice that may reach into a view is found by it.
      t.reach = new Float64Array(n);
      t.colors = new Uint8Array(n);
      let reach = -Infinity;
      for (let j = 0; j < n; j++) {
        const e = events[order[j]];
        t.starts[j] = e.ts;
        t.ends[j] = e.ts + (e.dur || 0);
        reach = Math.max(reach, t.ends[j]);
        t.reach[j] = reach;
        t.colors[j] = colorOf(e);
      }
      delete t.list;
      Object.assign(t, trackName(t, processNames.get(t.pid), threadNames.get(`${t.pid}/${t.tid}`)));
    }
    return list;
  }

  // A track's label (short enough for the label column) and title (whole, for its details), from
  // its process's and thread's names in the trace's metadata.
  function trackName(t, processName, threadName) {
    const process = processName || `pid ${t.pid}`;
    const thread = threadName || `tid ${t.tid}`;
    const short = thread.split(' · ').filter((w) => !/^(profiling|untimed)/.test(w)).join(' · ');
    // A rank of a parallel job names itself in its process (`prog · rank 3 (host)`, `rank 3 ·
    // device #1 · …`): a merge of the ranks' traces keeps them apart.
    const rank = (process.match(/\brank \d+/) || [''])[0];
    const of = rank ? `${rank} · ` : '';
    const name = t.device
      ? `${of}${process.replace(/^rank \d+ · /, '').replace(/ · .*/, '')} · ${short}`
      : `${of}${thread} (${t.tid})`;
    return { name, title: `${process} · ${thread}` };
  }

  // The trace's processes, each as its start event says: pid, program, and in a parallel job its
  // rank, the job's ranks and its host.
  function processes(events) {
    return events.filter((e) => e && e.name === 'clxfer trace start').map((e) => {
      const a = e.args || {};
      return { pid: a.pid ?? e.pid, program: a.program, rank: a.rank, ranks: a.ranks, host: a.host };
    });
  }

  // Arrows: each flow's start (`s`) and end (`f`), matched by name and id, as (time, track)
  // pairs, sorted by their earlier end.
  function flows(events, trackIndex) {
    const open = new Map();
    const out = [];
    for (const e of events) {
      if (!e || (e.ph !== 's' && e.ph !== 'f')) continue;
      const key = `${e.name}/${e.id}`;
      const track = trackIndex.get(`${e.pid}/${e.tid}`);
      if (track === undefined) continue;
      if (e.ph === 's') {
        open.set(key, { ts: e.ts, track });
      } else {
        const s = open.get(key);
        if (!s) continue;
        open.delete(key);
        out.push({ name: e.name, t0: s.ts, track0: s.track, t1: e.ts, track1: track });
      }
    }
    out.sort((a, b) => Math.min(a.t0, a.t1) - Math.min(b.t0, b.t1));
    return out;
  }

  // Devices whose rules were forced on them (`rules` ≠ `auto_rules` in their "device info"): their
  // own times say nothing of the devices the rules describe, so only projected figures are shown.
  function forcedDevices(events) {
    const forced = new Map();
    for (const e of events) {
      const a = e && e.args;
      if (e && e.name === 'device info' && a && a.auto_rules && a.auto_rules !== a.rules) forced.set(a.index, a.rules);
    }
    return forced;
  }

  // Every transfer's host slice (one with a path), each either a point (it moved bytes and has a
  // time: its command's device time, or the host time of a blocking call whose command has none,
  // as the report counts it; under forced rules the cost model's projected time) or counted
  // under why it has none, so the caption accounts for every one.
  function transfers(events) {
    const device = new Map();
    for (const e of events) {
      if (e && e.ph === 'X' && e.pid >= DEVICE_PID_BASE && e.args && e.args.command) {
        device.set(e.args.command, e.args.device_time ? null : e.dur);
      }
    }
    const forced = forcedDevices(events);
    const points = [];
    const left = { no_bytes: 0, sampled: 0, unavailable: 0, untimed: 0, no_projection: 0, implausible: 0 };
    let total = 0;
    for (const e of events) {
      const a = e && e.args;
      if (!a || e.ph !== 'X' || e.pid >= DEVICE_PID_BASE || !a.path) continue;
      total++;
      if (!(Number(a.bytes) > 0)) { left.no_bytes++; continue; }
      const index = Number((/device #(\d+)/.exec(a.queue || '') || [])[1]);
      let us, time;
      if (forced.has(index)) {
        us = Number(a.projected_us);
        time = `projected by the ${forced.get(index)} cost model`;
        if (!(us > 0)) { left.no_projection++; continue; }
      } else {
        let dev = a.command ? device.get(a.command) : undefined;
        // A device time no device can take (1 ns, or beyond MAX_GBPS) is not plotted, as the
        // report uses it nowhere; a blocking call's host time stands in, as there.
        const implausible = dev > 0 && (dev * 1000 <= 1 || Number(a.bytes) / (dev * 1000) > MAX_GBPS);
        if (implausible) dev = null;
        us = dev || (a.blocking ? e.dur : null);
        time = dev ? 'device' : 'host (blocking call)';
        if (implausible && !(us > 0)) { left.implausible++; continue; }
        if (!(us > 0)) {
          if (a.device_time === 'sampled') left.sampled++;
          else if (dev === null) left.unavailable++;
          else left.untimed++;
          continue;
        }
      }
      points.push({
        x: Number(a.bytes), y: Number(a.bytes) / (us * 1000), path: a.path, api: a.api,
        direction: a.direction, queue: a.queue, time, us, a, n: 1,
      });
    }
    return { points, left, total };
  }

  function build(events) {
    expand(events);
    const list = tracks(events);
    const trackIndex = new Map(list.map((t, i) => [t.key, i]));
    let start = Infinity, end = -Infinity;
    for (const t of list) {
      if (!t.count) continue;
      start = Math.min(start, t.starts[0]);
      end = Math.max(end, t.reach[t.count - 1]);
    }
    if (!(end > start)) { start = 0; end = 1; }
    // Each command's slices, host and device, by its number (the arrows' ends, and a click's
    // details).
    const commands = new Map();
    list.forEach((t, ti) => {
      for (let j = 0; j < t.count; j++) {
        const a = events[t.idx[j]].args;
        if (!a || !a.command) continue;
        const c = commands.get(a.command) || {};
        c[t.device ? 'device' : 'host'] = { track: ti, slice: j };
        commands.set(a.command, c);
      }
    });
    return { events, tracks: list, flows: flows(events, trackIndex), commands, start, end, processes: processes(events),
      ...transfers(events) };
  }

  Object.assign(ns, { PATHS, KINDS, COLORS, COLOR, DEVICE_PID_BASE, parse, build, lowerBound, trackName });
})(window.clxfer);
