// The charts drawn with Chart.js: bandwidth against transfer size (one point per transfer, or per
// spot where more than POINTS would be drawn), and per device the bytes and the device time by
// path, each on its own axis.
'use strict';

(function (ns) {
  // Above this many transfers, those that would land on one spot (per path, 1/8 of an octave of
  // size by 1/50 of a decade of bandwidth) are drawn as one point that counts them.
  const POINTS = 20000;

  function human(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = bytes, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
  }

  // A log axis over data from `min` to `max`: ticks at each power of `base`, and between them
  // (`between`, multiples of a power) where the range spans few powers; the axis ends on ticks,
  // so every point lies between two labelled ones.
  function logAxis(min, max, base, between) {
    const log = (v) => Math.log(v) / Math.log(base);
    if (!(max > 0)) max = 1;
    if (!(min > 0)) min = max;
    min *= 0.9;
    max *= 1.1;
    const lo = base ** Math.floor(log(min) + 1e-9);
    let hi = base ** Math.ceil(log(max) - 1e-9);
    if (hi <= lo) hi = lo * base;
    const spans = Math.round(log(hi / lo));
    const mults = spans <= 1 ? between[0] : spans <= 2 ? between[1] : [1];
    const all = [];
    for (let p = lo; p <= hi * 1.0001; p *= base) {
      for (const m of mults) if (p * m <= hi * 1.0001) all.push(p * m);
    }
    const below = all.filter((v) => v <= min);
    const above = all.filter((v) => v >= max);
    const ticks = all.filter((v) => v > min && v < max);
    ticks.unshift(below.length ? below[below.length - 1] : all[0]);
    ticks.push(above.length ? above[0] : all[all.length - 1]);
    return { min: ticks[0], max: ticks[ticks.length - 1], ticks: [...new Set(ticks)].map((value) => ({ value })) };
  }

  function describe(p) {
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

  // Transfers that would land on one spot, merged above POINTS (each keeps a count, `n`).
  function thin(points) {
    if (points.length <= POINTS) return points;
    const spots = new Map();
    for (const p of points) {
      const key = `${p.path}|${Math.round(Math.log2(p.x) * 8)}|${Math.round(Math.log10(p.y) * 50)}`;
      const s = spots.get(key);
      if (s) s.n++; else spots.set(key, { ...p, n: 1 });
    }
    return [...spots.values()];
  }

  // A tooltip of the nearest point alone, with how many others lie within 4 px of it, kept
  // inside the chart's box.
  function tooltip(tip) {
    return ({ chart, tooltip: t }) => {
      const dp = t.dataPoints && t.dataPoints[0];
      if (t.opacity === 0 || !dp) { tip.hidden = true; return; }
      const p = dp.raw;
      const lines = p.a ? describe(p) : [dp.dataset.label];
      if (p.a) {
        const [x, y] = [dp.element.x, dp.element.y];
        let here = -1;
        for (const d of chart.data.datasets) {
          if (d.type !== 'scatter') continue;
          for (const q of d.data) {
            const qx = chart.scales.x.getPixelForValue(q.x), qy = chart.scales.y.getPixelForValue(q.y);
            if (Math.abs(qx - x) <= 4 && Math.abs(qy - y) <= 4) here += q.n;
          }
        }
        here += p.n - 1;
        if (p.n > 1) lines.unshift(`${p.n} transfers at this spot; one of them:`);
        if (here > 0) lines.push(`… and ${here} more transfer${here === 1 ? '' : 's'} within 4 px`);
      }
      tip.replaceChildren(...lines.map((l) => { const d = document.createElement('div'); d.textContent = l; return d; }));
      tip.hidden = false;
      const box = tip.parentNode;
      const [bw, bh] = [box.clientWidth, box.clientHeight];
      const [w, h] = [tip.offsetWidth, tip.offsetHeight];
      let left = dp.element.x + 14;
      if (left + w > bw) left = dp.element.x - 14 - w;
      let top = dp.element.y - h / 2;
      tip.style.left = `${Math.max(0, Math.min(left, bw - w))}px`;
      tip.style.top = `${Math.max(0, Math.min(top, bh - h))}px`;
    };
  }

  function scatter(canvas, tip, points, report) {
    const drawn = thin(points);
    const byPath = new Map();
    for (const p of drawn) {
      if (!byPath.has(p.path)) byPath.set(p.path, []);
      byPath.get(p.path).push(p);
    }
    const datasets = [...byPath.entries()].map(([path, data]) => ({
      type: 'scatter', label: path, data, backgroundColor: ns.PATHS[path] || '#000',
      borderColor: ns.PATHS[path] || '#000', pointRadius: 3,
    }));
    const best = [];
    for (const d of (report && report.devices) || []) {
      for (const [dir, gbps] of d.best_pinned_gbps || []) best.push([d, dir, gbps]);
    }
    // Loops, not Math.min(...): a spread of a million arguments overflows the stack.
    let [x0, x1, y0, y1] = [Infinity, 0, Infinity, 0];
    for (const p of points) {
      x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x); y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
    }
    for (const b of best) { y0 = Math.min(y0, b[2]); y1 = Math.max(y1, b[2]); }
    const x = logAxis(x0, x1, 4, [[1, 2], [1, 2]]);
    const y = logAxis(y0, y1, 10, [[1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 5]]);
    for (const [d, dir, gbps] of best) {
      const projected = d.projection && d.projection.replaces ? ' (projected)' : '';
      datasets.push({
        type: 'line', label: `best pinned ${dir}, device #${d.index}: ${gbps.toFixed(2)} GB/s${projected}`,
        data: [{ x: x.min, y: gbps }, { x: x.max, y: gbps }], borderColor: ns.PATHS.pinned,
        borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5, isBest: true,
      });
    }
    const projected = points.length > 0 && points.every((p) => p.time.startsWith('projected'));
    return new Chart(canvas, {
      type: 'scatter',
      data: { datasets },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false,
        interaction: { mode: 'nearest', intersect: true },
        scales: {
          x: { type: 'logarithmic', min: x.min, max: x.max, title: { display: true, text: 'bytes per transfer' },
               afterBuildTicks: (axis) => { axis.ticks = x.ticks; },
               ticks: { callback: (v) => human(v) } },
          y: { type: 'logarithmic', min: y.min, max: y.max,
               title: { display: true, text: projected ? 'GB/s (10^9 bytes/s), projected by the cost model' : 'GB/s (10^9 bytes/s)' },
               afterBuildTicks: (axis) => { axis.ticks = y.ticks; },
               ticks: { callback: (v) => String(Number(v.toPrecision(3))) } },
        },
        plugins: {
          legend: { position: 'right' },
          tooltip: { enabled: false, external: tooltip(tip) },
        },
      },
    });
  }

  // Per device: bytes by path and device time by path, side by side, one unit each.
  function deviceBars(root, report) {
    const charts = [];
    for (const d of report.devices) {
      const projected = !!(d.projection && d.projection.replaces);
      const byPath = new Map();
      for (const r of d.transfers) {
        const s = byPath.get(r.path) || { bytes: 0, ns: 0 };
        s.bytes += r.bytes;
        // Under forced rules the cost model's time (this device's is not the rules' devices').
        s.ns += (projected ? r.projected_ns : (r.total_ns ?? r.device_ns)) || 0;
        byPath.set(r.path, s);
      }
      const div = document.createElement('div');
      div.className = 'device';
      const h = document.createElement('h3');
      h.textContent = `device #${d.index} · ${d.name} · ${d.rules} rules`;
      const pair = document.createElement('div');
      pair.className = 'pair';
      div.append(h, pair);
      root.append(div);
      const paths = [...byPath.keys()];
      const bar = (label, unit, values) => {
        const box = document.createElement('div');
        box.className = 'chart';
        const canvas = document.createElement('canvas');
        box.append(canvas);
        pair.append(box);
        charts.push(new Chart(canvas, {
          type: 'bar',
          data: { labels: paths, datasets: [{ label, data: values, backgroundColor: paths.map((p) => ns.PATHS[p]) }] },
          options: {
            animation: false, maintainAspectRatio: false,
            plugins: { legend: { display: false }, title: { display: true, text: label } },
            scales: { y: { beginAtZero: true, title: { display: true, text: unit } } },
          },
        }));
      };
      bar('bytes moved, by path', 'MiB', paths.map((p) => byPath.get(p).bytes / 2 ** 20));
      bar(projected ? 'projected device time, by path' : 'device time, by path', 'ms', paths.map((p) => byPath.get(p).ns / 1e6));
    }
    return charts;
  }

  Object.assign(ns, { human, logAxis, scatter, deviceBars });
})(window.clxfer);
