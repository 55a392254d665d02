// The clxfer viewer: a trace's transfers at a glance. The analysis is clxfer's own: the findings and
// the per-device tables come from the report (`clxfer report --format json`), which a trace carries
// in its last event and `clxfer view` serves beside it; this page only plots it, plus one point per
// transfer taken straight from the trace's slices.
'use strict';

// One colour per path (the same words as docs/RULES.md).
const PATHS = {
  'pinned': '#2e7d32', 'staged': '#c62828', 'zero-copy': '#1565c0', 'device': '#6a1b9a',
  'peer': '#00838f', 'via-host': '#ef6c00', 'none': '#757575', 'unknown': '#9e9e9e',
};
const DEVICE_PID_BASE = 2 ** 31;

const $ = (id) => document.getElementById(id);
const state = { status: 'empty', points: 0, trace: null, name: '', charts: [] };
window.clxferViewer = state;

function fail(message) {
  state.status = 'error';
  state.error = message;
  $('error').textContent = message;
  $('error').hidden = false;
  for (const id of ['points-section', 'findings-section', 'devices-section']) $(id).hidden = true;
  $('perfetto').disabled = true;
}

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

// Ticks at the powers of `base` between min and max (log axes: 1 KiB, 4 KiB, 16 KiB…; 0.1, 1, 10…).
function powers(min, max, base) {
  const ticks = [];
  for (let v = base ** Math.floor(Math.log(min) / Math.log(base)); v <= max * 1.0001; v *= base) {
    if (v >= min / 1.0001) ticks.push({ value: v });
  }
  return ticks;
}

function human(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

// Devices whose rules were forced on them (`rules` ≠ `auto_rules` in their "device info"): their
// own times say nothing of the devices the rules describe, so only projected figures are shown.
function forcedDevices(events) {
  const forced = new Map();
  for (const e of events) {
    const a = e && e.args;
    if (e.name === 'device info' && a && a.auto_rules && a.auto_rules !== a.rules) forced.set(a.index, a.rules);
  }
  return forced;
}

// One point per transfer that moved bytes and has a time: the device time of its command, or the
// host time of a blocking call whose command has none (as the report counts it); under forced
// rules the cost model's projected time (`projected_us`), and no point where it has none.
function transfers(events) {
  const device = new Map();
  for (const e of events) {
    if (e.ph === 'X' && e.pid >= DEVICE_PID_BASE && e.args && e.args.command) {
      device.set(e.args.command, e.args.device_time === 'unavailable' ? null : e.dur);
    }
  }
  const forced = forcedDevices(events);
  const points = [];
  for (const e of events) {
    const a = e.args;
    if (e.ph !== 'X' || e.pid >= DEVICE_PID_BASE || !a || !a.path || !(Number(a.bytes) > 0)) continue;
    const index = Number((/device #(\d+)/.exec(a.queue || '') || [])[1]);
    let us, time;
    if (forced.has(index)) {
      us = Number(a.projected_us);
      time = `projected by the ${forced.get(index)} cost model`;
    } else {
      const dev = a.command ? device.get(a.command) : undefined;
      us = dev || (a.blocking ? e.dur : null);
      time = dev ? 'device' : 'host (blocking call)';
    }
    if (!(us > 0)) continue;
    points.push({
      x: Number(a.bytes), y: Number(a.bytes) / (us * 1000), path: a.path, api: a.api, direction: a.direction,
      queue: a.queue, time, us, a,
    });
  }
  return points;
}

function tooltip(p) {
  const a = p.a;
  const lines = [
    `${p.api} ${p.direction} ${p.path}`,
    `${human(p.x)} in ${p.us.toFixed(3)} µs (${p.time}): ${p.y.toFixed(3)} GB/s`,
    `${a.queue}, ${a.blocking ? 'blocking' : 'non-blocking'}`,
  ];
  if (a.host_memory) lines.push(`host memory: ${a.host_memory}${a.host_ptr ? ' at ' + a.host_ptr : ''}`);
  for (const m of a.mem_objects || []) lines.push(`${m.kind} #${m.id} (${m.flags})`);
  if (a.map_flags) lines.push(`map flags: ${a.map_flags}`);
  if (a.migration_flags) lines.push(`migration flags: ${a.migration_flags}`);
  for (const r of a.reasons || []) lines.push(r);
  return lines;
}

function drawPoints(points, report) {
  const byPath = new Map();
  for (const p of points) {
    if (!byPath.has(p.path)) byPath.set(p.path, []);
    byPath.get(p.path).push(p);
  }
  const datasets = [...byPath.entries()].map(([path, data]) => ({
    type: 'scatter', label: path, data, backgroundColor: PATHS[path] || '#000',
    borderColor: PATHS[path] || '#000', pointRadius: 3,
  }));
  const xs = points.map((p) => p.x);
  const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
  for (const d of (report && report.devices) || []) {
    for (const [dir, gbps] of d.best_pinned_gbps) {
      const projected = d.projection && d.projection.replaces ? ' (projected)' : '';
      datasets.push({
        type: 'line', label: `best pinned ${dir}, device #${d.index}: ${gbps.toFixed(2)} GB/s${projected}`,
        data: [{ x: lo, y: gbps }, { x: hi, y: gbps }], borderColor: PATHS.pinned,
        borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5, isBest: true,
      });
    }
  }
  const chart = new Chart($('points'), {
    type: 'scatter',
    data: { datasets },
    options: {
      animation: false, maintainAspectRatio: false, parsing: false,
      scales: {
        x: { type: 'logarithmic', title: { display: true, text: 'bytes per transfer' },
             afterBuildTicks: (axis) => { axis.ticks = powers(axis.min, axis.max, 4); },
             ticks: { callback: (v) => human(v) } },
        y: { type: 'logarithmic', title: { display: true, text: 'GB/s (10^9 bytes/s)' },
             afterBuildTicks: (axis) => { axis.ticks = powers(axis.min, axis.max, 10); },
             ticks: { callback: (v) => String(Number(v.toPrecision(3))) } },
      },
      plugins: {
        legend: { position: 'right' },
        tooltip: { callbacks: { label: (ctx) => (ctx.raw.a ? tooltip(ctx.raw) : ctx.dataset.label) } },
      },
    },
  });
  state.charts.push(chart);
  state.scatter = chart;
  state.points = points.length;
  state.paths = Object.fromEntries([...byPath.keys()].map((p) => [p, PATHS[p]]));
  const timed = points.filter((p) => p.time === 'device').length;
  const projected = points.filter((p) => p.time.startsWith('projected')).length;
  const host = points.length - timed - projected;
  const parts = [`${timed} timed on the device`];
  if (projected) parts.push(`${projected} projected by the cost model of rules forced on their device`);
  if (host) parts.push(`${host} by the host time of their blocking call`);
  $('points-note').textContent = `${points.length} transfers (${parts.join(', ')}). ` +
    'Hover a point for its call, flags and reasons.';
  $('points-section').hidden = false;
}

function drawFindings(report) {
  const ol = $('findings');
  ol.replaceChildren();
  // As the text report: a finding that would save under 1% of the run's wall time is counted,
  // not shown (the JSON keeps it).
  const minor = report.findings.filter((f) => f.minor);
  for (const f of report.findings.filter((f) => !f.minor)) {
    const li = document.createElement('li');
    const line = (label, text, cls) => {
      const div = document.createElement('div');
      div.className = cls || 'line';
      if (label !== null) {
        const l = document.createElement('span');
        l.className = 'label';
        l.textContent = label;
        div.append(l, ' ');
      }
      div.append(text);
      li.append(div);
    };
    line(null, f.title, 'title');
    f.evidence.forEach((e, i) => line(i === 0 ? 'evidence:' : '', e));
    line('fix:', f.fix);
    line('saves:', f.saves);
    li.dataset.kind = f.kind;
    ol.append(li);
  }
  if (minor.length) {
    const li = document.createElement('li');
    li.className = 'minor';
    li.textContent = (minor.length === 1 ? '1 more finding would save' :
      `${minor.length} more findings would each save`) +
      ` under 1% of the run's wall time: ${minor.map((f) => f.kind).join(', ')}.`;
    ol.append(li);
  }
  if (!report.findings.length) {
    const li = document.createElement('li');
    li.textContent = 'None: no race, and no staged, held, wasted or latency-bound transfers seen.';
    ol.append(li);
  }
  $('findings-section').hidden = false;
}

function drawDevices(report) {
  const root = $('devices');
  root.replaceChildren();
  for (const d of report.devices) {
    const byPath = new Map();
    for (const r of d.transfers) {
      const s = byPath.get(r.path) || { bytes: 0, ns: 0 };
      s.bytes += r.bytes;
      // Under forced rules the cost model's time (this device's is not the rules' devices').
      s.ns += (d.projection && d.projection.replaces ? r.projected_ns : r.device_ns) || 0;
      byPath.set(r.path, s);
    }
    const div = document.createElement('div');
    div.className = 'device';
    const h = document.createElement('h3');
    h.textContent = `device #${d.index} · ${d.name} · ${d.rules} rules`;
    const box = document.createElement('div');
    box.className = 'chart';
    const canvas = document.createElement('canvas');
    box.append(canvas);
    div.append(h, box);
    root.append(div);
    const paths = [...byPath.keys()];
    const chart = new Chart(canvas, {
      type: 'bar',
      data: {
        labels: paths,
        datasets: [
          { label: 'MiB moved', data: paths.map((p) => byPath.get(p).bytes / 2 ** 20), yAxisID: 'bytes',
            backgroundColor: paths.map((p) => PATHS[p]) },
          { label: d.projection && d.projection.replaces ? 'projected device time, ms' : 'device time, ms', data: paths.map((p) => byPath.get(p).ns / 1e6), yAxisID: 'time',
            backgroundColor: paths.map((p) => PATHS[p] + '80') },
        ],
      },
      options: {
        animation: false, maintainAspectRatio: false,
        scales: {
          bytes: { position: 'left', title: { display: true, text: 'MiB' } },
          time: { position: 'right', title: { display: true, text: 'ms' }, grid: { drawOnChartArea: false } },
        },
      },
    });
    state.charts.push(chart);
  }
  $('devices-section').hidden = false;
}

function show(text, name, served) {
  for (const c of state.charts) c.destroy();
  state.charts = [];
  $('error').hidden = true;
  $('hint').hidden = true;
  let data;
  try {
    data = parse(text);
  } catch (e) {
    return fail(`${name} is not JSON: ${e.message}`);
  }
  const events = Array.isArray(data) ? data : data && data.traceEvents;
  let report = served || null;
  if (Array.isArray(events)) {
    if (!events.some((e) => e && e.name === 'clxfer trace start')) {
      return fail(`${name} is a trace, but not one clxfer wrote (no "clxfer trace start" event).`);
    }
    const end = events.find((e) => e && e.name === 'clxfer trace end');
    report = report || (end && end.args && end.args.report) || null;
    state.trace = text;
    drawPoints(transfers(events), report);
    $('perfetto').disabled = false;
  } else if (data && Array.isArray(data.findings) && Array.isArray(data.devices)) {
    report = data;
    state.trace = null;
    state.points = 0;
    $('points-section').hidden = true;
    $('perfetto').disabled = true;
  } else {
    return fail(`${name} is neither a clxfer trace nor a clxfer report.`);
  }
  state.name = name;
  state.report = report;
  $('title').textContent = report ? `${report.program} (pid ${report.pid}) · ${name}` : name;
  if (report) {
    drawFindings(report);
    drawDevices(report);
  } else {
    $('error').textContent = `${name} has no report (the program did not exit normally?): ` +
      'run `clxfer view` on it, which computes one.';
    $('error').hidden = false;
  }
  state.status = 'ready';
}

function readFile(file) {
  state.status = 'loading';
  file.text().then((t) => show(t, file.name), (e) => fail(`cannot read ${file.name}: ${e}`));
}

// Perfetto's documented way to receive a trace from another page: open it, ping until it answers,
// then post the buffer.
function openInPerfetto() {
  const origin = 'https://ui.perfetto.dev';
  const win = window.open(origin);
  if (!win || !state.trace) return;
  const buffer = new TextEncoder().encode(state.trace).buffer;
  const timer = setInterval(() => win.postMessage('PING', origin), 50);
  window.addEventListener('message', function onMessage(e) {
    if (e.source !== win || e.data !== 'PONG') return;
    clearInterval(timer);
    window.removeEventListener('message', onMessage);
    win.postMessage({ perfetto: { buffer, title: state.name, fileName: state.name } }, origin);
  });
}

function init() {
  $('file').addEventListener('change', (e) => e.target.files[0] && readFile(e.target.files[0]));
  $('perfetto').addEventListener('click', openInPerfetto);
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('dragging'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('dragging');
    if (e.dataTransfer.files[0]) readFile(e.dataTransfer.files[0]);
  });
  // Served by `clxfer view`: ?trace=…&report=…
  const q = new URLSearchParams(location.search);
  if (q.get('trace')) {
    state.status = 'loading';
    Promise.all([
      fetch(q.get('trace')).then((r) => r.text()),
      q.get('report') ? fetch(q.get('report')).then((r) => r.json()) : null,
    ]).then(([text, report]) => show(text, q.get('name') || q.get('trace'), report),
      (e) => fail(`cannot load ${q.get('trace')}: ${e}`));
  }
}

init();
