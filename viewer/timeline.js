// The timeline, drawn on a canvas by this page (no internet, no library): host threads and device
// queues as tracks, slices coloured as the scatter colours paths, kernels and waits in their own
// colours, the enqueue→device and dependency arrows, zoom and pan by mouse and keyboard, a click
// for a slice's details.
//
// Level of detail: a track draws at most one rectangle per pixel column. Where slices are
// narrower than a pixel, the first in a column is drawn and the rest are skipped by a binary
// search to the next column, so a frame costs the canvas's width (times log n) per track, not
// the trace's size. Arrows are drawn only while at most ARROWS of them are in view.
//
// A trace `clxfer view` has indexed (remote.js) is drawn from the server's answer for the view:
// the same one rectangle per pixel column, merged there, each saying how many slices it stands
// for. A new view is drawn at once from the last answer, then again when its own comes.
'use strict';

(function (ns) {
  const ROW = 20;
  const AXIS = 24;
  const LABELS = 230;
  const ARROWS = 2000;
  const ARROW_COLORS = { enqueue: '#37474f', wait: '#8e24aa', race: '#d50000' };

  // Nice steps for the time axis (µs): 1, 2, 5 × 10^k.
  function step(span, px) {
    const raw = span / Math.max(1, px / 110);
    const p = 10 ** Math.floor(Math.log10(raw));
    return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  }

  function time(us) {
    const a = Math.abs(us);
    if (a >= 1e6) return `${+(us / 1e6).toPrecision(4)} s`;
    if (a >= 1e3) return `${+(us / 1e3).toPrecision(4)} ms`;
    if (a >= 1) return `${+us.toPrecision(4)} µs`;
    return `${+(us * 1e3).toPrecision(3)} ns`;
  }

  class Timeline {
    constructor(box, details, model) {
      this.box = box;
      this.details = details;
      this.model = model;
      this.arrows = { enqueue: true, wait: true, race: true };
      this.canvas = document.createElement('canvas');
      this.canvas.tabIndex = 0;
      this.canvas.setAttribute('aria-label', 'timeline: wheel or W/S to zoom, drag or A/D to pan, 0 to reset, click a slice for its details');
      box.replaceChildren(this.canvas);
      this.ctx = this.canvas.getContext('2d');
      this.selected = null;
      this.hiddenArrows = 0;
      // Indexed: the latest view's answer, and the one asked for.
      this.win = null;
      this.asking = null;
      this.reset();
      this.listen();
    }

    reset() {
      const m = this.model;
      const pad = (m.end - m.start) * 0.01;
      this.view = { start: m.start - pad, end: m.end + pad };
      this.draw();
    }

    // Zoom by `factor` (< 1: in) around time `at`.
    zoom(factor, at) {
      const v = this.view;
      const c = at === undefined ? (v.start + v.end) / 2 : at;
      const span = Math.max((v.end - v.start) * factor, 1e-3);
      const f = (c - v.start) / (v.end - v.start);
      this.view = { start: c - f * span, end: c - f * span + span };
      this.draw();
    }

    pan(fraction) {
      const d = (this.view.end - this.view.start) * fraction;
      this.view = { start: this.view.start + d, end: this.view.end + d };
      this.draw();
    }

    width() { return this.canvas.width / (window.devicePixelRatio || 1) - LABELS; }

    x(t) { return LABELS + (t - this.view.start) / (this.view.end - this.view.start) * this.width(); }

    timeAt(px) { return this.view.start + (px - LABELS) / this.width() * (this.view.end - this.view.start); }

    listen() {
      const c = this.canvas;
      c.addEventListener('wheel', (e) => {
        e.preventDefault();
        const r = c.getBoundingClientRect();
        if (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey) {
          this.pan((e.deltaX || e.deltaY) / 1000);
        } else {
          const px = e.clientX - r.left;
          this.zoom(Math.exp(e.deltaY / 300), px > LABELS ? this.timeAt(px) : undefined);
        }
      }, { passive: false });
      let drag = null;
      c.addEventListener('mousedown', (e) => { drag = { x: e.clientX, moved: false, view: { ...this.view } }; });
      window.addEventListener('mousemove', (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x;
        if (Math.abs(dx) > 3) drag.moved = true;
        if (!drag.moved) return;
        const dt = dx / this.width() * (drag.view.end - drag.view.start);
        this.view = { start: drag.view.start - dt, end: drag.view.end - dt };
        this.draw();
      });
      window.addEventListener('mouseup', (e) => {
        if (drag && !drag.moved && e.target === c) {
          const r = c.getBoundingClientRect();
          this.select(this.hit(e.clientX - r.left, e.clientY - r.top));
        }
        drag = null;
      });
      c.addEventListener('keydown', (e) => {
        const k = e.key.toLowerCase();
        const act = { w: () => this.zoom(0.8), '+': () => this.zoom(0.8), '=': () => this.zoom(0.8),
          s: () => this.zoom(1.25), '-': () => this.zoom(1.25), a: () => this.pan(-0.2),
          arrowleft: () => this.pan(-0.2), d: () => this.pan(0.2), arrowright: () => this.pan(0.2),
          0: () => this.reset() }[k];
        if (act) { e.preventDefault(); act(); }
      });
      window.addEventListener('resize', () => this.draw());
    }

    // The slice under (px, py) in canvas pixels: (track, slice), or null; indexed, the group
    // under it: (track, group).
    hit(px, py) {
      const ti = Math.floor((py - AXIS) / ROW);
      const t = this.model.tracks[ti];
      if (!t || px < LABELS) return null;
      const at = this.timeAt(px);
      const slop = 2 / this.width() * (this.view.end - this.view.start);
      if (this.model.indexed) {
        const w = this.win && this.win.tracks[ti];
        if (!w) return null;
        let found = null;
        for (const g of w.groups) {
          if (g.start > at + slop) break;
          // A single slice before a merged group that covers it too.
          if (g.end >= at - slop && (!found || found.count > 1 || g.count === 1)) found = g;
        }
        return found && { track: ti, group: found };
      }
      let j = ns.lowerBound(t.starts, at + slop) - 1;
      for (; j >= 0 && t.reach[j] >= at - slop; j--) {
        if (t.starts[j] <= at + slop && t.ends[j] >= at - slop) return { track: ti, slice: j };
      }
      return null;
    }

    // The page position of a command's host or device slice (for tests and links), zooming so
    // that it is at least a few pixels wide.
    locate(command, side) {
      const c = this.model.commands.get(command);
      const at = c && c[side];
      if (!at) return null;
      const t = this.model.tracks[at.track];
      const [s, e] = [t.starts[at.slice], t.ends[at.slice]];
      const span = Math.max((e - s) * 4, 1);
      this.view = { start: (s + e) / 2 - span / 2, end: (s + e) / 2 + span / 2 };
      this.draw();
      const r = this.canvas.getBoundingClientRect();
      return { x: r.left + this.x((s + e) / 2), y: r.top + AXIS + at.track * ROW + ROW / 2 };
    }

    // Shows the view from `from` to `to` (µs).
    goTo(from, to) {
      this.view = { start: from, end: to };
      this.draw();
    }

    // Where time `t` (µs) on track `ti` is on the canvas (CSS pixels from its corner).
    point(ti, t) {
      return { x: this.x(t), y: AXIS + ti * ROW + ROW / 2 };
    }

    select(hit) {
      this.selected = hit;
      this.draw();
      this.details.replaceChildren();
      this.details.hidden = !hit;
      if (!hit) return;
      const m = this.model;
      const t = m.tracks[hit.track];
      if (m.indexed) {
        const g = hit.group;
        if (g.count > 1) {
          this.title(`${g.count} slices`);
          this.add('track:', t.title);
          this.add('from:', `${time(g.start)} to ${time(g.end)}: each narrower than a pixel here; zoom in to tell them apart`);
          return;
        }
        this.title(g.name || '');
        this.add('details:', 'reading…');
        const asked = hit;
        m.details(hit.track, g.first).then((d) => {
          if (this.selected !== asked) return;
          this.details.replaceChildren();
          this.show(d.event, t, d.host, d.device);
          this.shown = d;
        }, (e) => {
          if (this.selected !== asked) return;
          this.details.replaceChildren();
          this.title(g.name || '');
          this.add('details:', `not at hand: ${e.message}`);
        });
        return;
      }
      const e = m.events[t.idx[hit.slice]];
      const a = e.args || {};
      // A command's classification is on its host slice; its device time on its device slice.
      const c = a.command ? m.commands.get(a.command) : null;
      const host = c && c.host ? m.events[m.tracks[c.host.track].idx[c.host.slice]] : (t.device ? null : e);
      const dev = c && c.device ? m.events[m.tracks[c.device.track].idx[c.device.slice]] : null;
      this.show(e, t, host, dev);
    }

    title(text) {
      const h = document.createElement('div');
      h.className = 'title';
      h.textContent = text;
      this.details.append(h);
    }

    add(label, text) {
      const row = document.createElement('div');
      const l = document.createElement('span');
      l.className = 'label';
      l.textContent = label;
      row.append(l, ' ', String(text));
      this.details.append(row);
    }

    // A slice's details: `e` on track `t`, with its command's host and device slices (events read
    // back whole; either may be null).
    show(e, t, host, dev) {
      const a = e.args || {};
      const add = (label, text) => this.add(label, text);
      this.title(e.name);
      add('track:', t.title);
      add('start:', `${time(e.ts)} (from the trace's start), lasting ${time(e.dur || 0)}`);
      const ha = (host && host.args) || {};
      if (a.command) add('command:', `#${a.command}${ha.api ? ' · ' + ha.api : ''}${ha.queue ? ' on ' + ha.queue : ''}`);
      if (ha.path) {
        add('classification:', `${ha.direction} ${ha.path}, ${ns.human(Number(ha.bytes) || 0)}, ${ha.blocking ? 'blocking' : 'non-blocking'} (${ha.rules} rules)`);
        if (ha.host_memory) add('host memory:', `${ha.host_memory}${ha.host_ptr ? ' at ' + ha.host_ptr : ''}`);
        for (const o of ha.mem_objects || []) add('object:', `${o.kind} #${o.id} (${o.flags})${o.access ? ', ' + o.access : ''}`);
        if (ha.map_flags) add('map flags:', ha.map_flags);
        if (ha.migration_flags) add('migration flags:', ha.migration_flags);
        (ha.reasons || []).forEach((r, i) => add(i ? '' : 'reasons:', r));
      }
      if (ha.kernel) add('kernel:', ha.kernel);
      const same = host && host.ts === e.ts && host.name === e.name && host.pid === e.pid;
      if (host && !same) add('host call:', `${time(host.dur || 0)} at ${time(host.ts)}`);
      if (dev) {
        const da = dev.args || {};
        const gbps = da.device_gbps !== undefined ? `, ${da.device_gbps} GB/s` : '';
        add('device:', da.device_time ? `time ${da.device_time}` : `${time(dev.dur || 0)} at ${time(dev.ts)}${gbps}`);
        if (da.enqueue_to_start_us !== undefined) add('enqueue to start:', time(da.enqueue_to_start_us));
      } else if (ha.device_time) {
        add('device:', `no device slice (${ha.device_time})`);
      }
      if (ha.projected_us !== undefined) add('projected:', `${time(ha.projected_us)} (${ha.projected_gbps} GB/s by the rules' cost model)`);
      if (a.waited_for) add('waited for:', a.waited_for.map((n) => '#' + n).join(' '));
      if (a.finished_up_to !== undefined) add('finished up to:', '#' + a.finished_up_to);
      if (ha.waits) add('waits for:', ha.waits.map((n) => '#' + n).join(' '));
    }

    // Indexed: what the view is asked for by, and whether its answer is the one drawn.
    key() {
      const v = this.view;
      const on = Object.entries(this.arrows).filter(([, x]) => x).map(([k]) => k).join(',');
      return `${v.start}/${v.end}/${Math.round(this.width())}/${on}`;
    }

    settled() { return !this.model.indexed || (!!this.win && this.win.key === this.key() && !this.asking); }

    // Indexed: asks the server for the view drawn (one question at a time; the latest view is
    // asked for when an answer comes).
    ask() {
      const key = this.key();
      if ((this.win && this.win.key === key) || this.asking) return;
      const v = this.view;
      const began = performance.now();
      this.asking = key;
      this.model.window(v.start, v.end, this.width(), this.arrows).then((win) => {
        this.asking = null;
        win.key = key;
        win.ms = performance.now() - began;
        this.win = win;
        this.error = null;
        this.draw();
        if (this.onWindow) this.onWindow(win);
      }, (e) => {
        this.asking = null;
        this.error = e.message;
        if (this.onWindow) this.onWindow(null);
      });
    }

    draw() {
      const m = this.model;
      const dpr = window.devicePixelRatio || 1;
      const cssW = this.box.clientWidth || 800;
      const cssH = AXIS + m.tracks.length * ROW + 4;
      if (this.canvas.width !== Math.round(cssW * dpr) || this.canvas.height !== Math.round(cssH * dpr)) {
        this.canvas.width = Math.round(cssW * dpr);
        this.canvas.height = Math.round(cssH * dpr);
        this.canvas.style.width = `${cssW}px`;
        this.canvas.style.height = `${cssH}px`;
      }
      const began = performance.now();
      const g = this.ctx;
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, cssW, cssH);
      g.font = '11px system-ui, sans-serif';
      g.textBaseline = 'middle';
      const w = cssW - LABELS;
      const { start, end } = this.view;
      const scale = w / (end - start);
      // Slices looked at, for the tests: the level of detail bounds it by the width, not the trace.
      let visits = 0;
      // The axis.
      const st = step(end - start, w);
      g.fillStyle = '#555';
      g.strokeStyle = '#e0e0e0';
      for (let v = Math.ceil(start / st) * st; v <= end; v += st) {
        const x = LABELS + (v - start) * scale;
        g.fillText(time(v), x + 3, AXIS / 2);
        g.beginPath();
        g.moveTo(x + 0.5, AXIS - 6);
        g.lineTo(x + 0.5, cssH);
        g.stroke();
      }
      // The tracks.
      m.tracks.forEach((t, ti) => {
        const y = AXIS + ti * ROW;
        g.fillStyle = ti % 2 ? '#fff' : '#f5f7f8';
        g.fillRect(0, y, cssW, ROW);
        g.fillStyle = t.device ? '#1a237e' : '#263238';
        g.save();
        g.beginPath();
        g.rect(0, y, LABELS - 6, ROW);
        g.clip();
        g.fillText(t.name, 4, y + ROW / 2);
        g.restore();
        g.save();
        g.beginPath();
        g.rect(LABELS, y, w, ROW);
        g.clip();
        if (m.indexed) {
          visits += this.drawGroups(g, ti, y, w, scale);
          g.restore();
          return;
        }
        let j = ns.lowerBound(t.reach, start);
        let lastPx = -1;
        while (j < t.count) {
          visits++;
          const s = t.starts[j];
          if (s > end) break;
          const x0 = (s - start) * scale;
          const x1 = (t.ends[j] - start) * scale;
          if (x1 - x0 < 1) {
            const px = Math.floor(x0);
            if (px > lastPx) {
              // The column's colour: the most telling of its first few slices (a path before
              // a kernel, a wait or another call: the colour indices' order).
              let c = t.colors[j];
              const next = start + (px + 1) / scale;
              for (let k = j + 1; k < Math.min(j + 8, t.count) && t.starts[k] < next; k++) c = Math.min(c, t.colors[k]);
              g.fillStyle = ns.COLORS[c];
              g.fillRect(LABELS + Math.max(px, 0), y + 2, 1, ROW - 4);
              lastPx = px;
            }
            // Skip to the first slice that starts in the next pixel column.
            j = Math.max(j + 1, ns.lowerBound(t.starts, start + (lastPx + 1) / scale, j + 1));
            continue;
          }
          const left = Math.max(x0, -1);
          const width = Math.min(x1, w + 1) - left;
          g.fillStyle = ns.COLORS[t.colors[j]];
          g.fillRect(LABELS + left, y + 2, width, ROW - 4);
          lastPx = Math.max(lastPx, Math.floor(x1));
          if (width > 40) {
            g.fillStyle = '#111';
            g.fillText(m.events[t.idx[j]].name, LABELS + left + 3, y + ROW / 2, width - 6);
          }
          j++;
        }
        g.restore();
      });
      // The selected slice (or group).
      if (this.selected) {
        const t = m.tracks[this.selected.track];
        const j = this.selected.slice;
        const gr = this.selected.group;
        const x0 = this.x(gr ? gr.start : t.starts[j]);
        const x1 = Math.max(this.x(gr ? gr.end : t.ends[j]), x0 + 2);
        g.strokeStyle = '#000';
        g.lineWidth = 2;
        g.strokeRect(x0, AXIS + this.selected.track * ROW + 1, x1 - x0, ROW - 2);
        g.lineWidth = 1;
      }
      this.drawArrows(g, cssW);
      this.drawMs = performance.now() - began;
      this.drawVisits = visits;
      this.drawWidth = w;
      if (m.indexed) this.ask();
      if (this.onDraw) this.onDraw();
    }

    // Indexed: track `ti`'s groups in the last answer, drawn at the view's scale (the answer may
    // be of the view before: a pan or zoom draws at once, then again with its own). Returns how
    // many were drawn.
    drawGroups(g, ti, y, w, scale) {
      const got = this.win && this.win.tracks[ti];
      if (!got) return 0;
      const { start } = this.view;
      let lastPx = -Infinity;
      for (const gr of got.groups) {
        const x0 = (gr.start - start) * scale;
        const x1 = (gr.end - start) * scale;
        g.fillStyle = ns.COLORS[gr.color];
        if (x1 - x0 < 1) {
          const px = Math.floor(Math.max(x0, 0));
          if (px > lastPx) g.fillRect(LABELS + px, y + 2, 1, ROW - 4);
          lastPx = Math.max(lastPx, px);
          continue;
        }
        const left = Math.max(x0, -1);
        const width = Math.min(x1, w + 1) - left;
        g.fillRect(LABELS + left, y + 2, width, ROW - 4);
        lastPx = Math.max(lastPx, Math.floor(x1));
        if (width > 40) {
          g.fillStyle = '#111';
          const text = gr.count === 1 ? gr.name : `${gr.count} slices`;
          g.fillText(text || '', LABELS + left + 3, y + ROW / 2, width - 6);
        }
      }
      return got.groups.length;
    }

    drawArrows(g, cssW) {
      const { start, end } = this.view;
      let inView = [];
      if (this.model.indexed) {
        // The server's: those in the answer's view, or how many past ARROWS.
        inView = (this.win && this.win.flows) || [];
        this.hiddenArrows = (this.win && this.win.over) || 0;
      } else {
        // Flows are sorted by their earlier end; those in view start before the view's end.
        for (const f of this.model.flows) {
          if (Math.min(f.t0, f.t1) > end) break;
          if (Math.max(f.t0, f.t1) < start || this.arrows[f.name] === false) continue;
          inView.push(f);
          if (inView.length > ARROWS) break;
        }
        this.hiddenArrows = inView.length > ARROWS ? inView.length : 0;
      }
      if (this.hiddenArrows) return;
      g.save();
      g.beginPath();
      g.rect(LABELS, AXIS, cssW - LABELS, this.canvas.height);
      g.clip();
      for (const f of inView) {
        const x0 = this.x(f.t0), x1 = this.x(f.t1);
        const y0 = AXIS + f.track0 * ROW + ROW / 2, y1 = AXIS + f.track1 * ROW + ROW / 2;
        g.strokeStyle = g.fillStyle = ARROW_COLORS[f.name] || '#37474f';
        g.beginPath();
        g.moveTo(x0, y0);
        g.bezierCurveTo(x0 + 20, y0, x1 - 20, y1, x1, y1);
        g.stroke();
        const dir = y1 >= y0 ? 1 : -1;
        g.beginPath();
        g.moveTo(x1, y1);
        g.lineTo(x1 - 6, y1 - 3 * dir);
        g.lineTo(x1 - 6, y1 + 3 * dir);
        g.fill();
      }
      g.restore();
    }

    // What tests and the page's caption read (indexed: with each track's slices in the answer
    // drawn, and that answer's view).
    summary() {
      const win = this.win;
      return {
        tracks: this.model.tracks.map((t, i) => ({ pid: t.pid, tid: t.tid, name: t.name, slices: t.count,
          ...(this.model.indexed ? { in_view: win && win.tracks[i] ? win.tracks[i].n : null,
            groups: win && win.tracks[i] ? win.tracks[i].groups.length : null } : {}) })),
        indexed: !!this.model.indexed,
        answered: win ? { from: win.from, to: win.to, px: win.px, ms: win.ms } : null,
        settled: this.settled(),
        view: { ...this.view },
        drawMs: this.drawMs,
        drawVisits: this.drawVisits,
        drawWidth: this.drawWidth,
        hiddenArrows: this.hiddenArrows,
      };
    }
  }

  ns.Timeline = Timeline;
  ns.time = time;
})(window.clxfer);
