// The header: where the run's time went, from the report alone (`clxfer report --format json`,
// which the trace's end event carries and `clxfer view` serves), so its figures are the report's:
// the wall time; the verdict; per device the device time of transfers by path, of kernels, busy and idle;
// the top findings with their savings; and whether each figure is measured or projected.
'use strict';

(function (ns) {
  // The header's figures, as numbers (what the page shows, and what tests compare to the report).
  function figures(report) {
    const devices = (report.devices || []).map((d) => {
      const projected = !!(d.projection && d.projection.replaces);
      const paths = {};
      let extrapolated = 0, sampled = 0;
      for (const r of d.transfers || []) {
        // Under forced rules the cost model's time stands in for this device's; else the
        // measured time with the estimate for what sampling left untimed (the report's whole).
        paths[r.path] = (paths[r.path] || 0) + ((projected ? r.projected_ns : (r.total_ns ?? r.device_ns)) || 0);
        if (r.sampled) {
          extrapolated += r.sampled.estimated_ns || 0;
          sampled += r.sampled.calls || 0;
        }
      }
      const busy = d.busy || { span_ns: 0, busy_ns: 0 };
      return {
        index: d.index, name: d.name, rules: d.rules,
        basis: projected ? `projected by the ${d.projection.rules} cost model (${d.projection.on})` : 'measured',
        paths,
        transfers_ns: Object.values(paths).reduce((a, b) => a + b, 0),
        kernels_ns: (d.kernels || []).reduce((a, k) => a + (k.device_ns || 0) + ((k.sampled && k.sampled.estimated_ns) || 0), 0),
        busy_ns: busy.busy_ns,
        idle_ns: Math.max(0, busy.span_ns - busy.busy_ns),
        span_ns: busy.span_ns,
        sampled, extrapolated_ns: extrapolated,
        busy_projected: !!d.busy_projected,
      };
    });
    const shown = (report.findings || []).filter((f) => !f.minor);
    const v = report.verdict;
    return {
      wall_ns: report.wall_ns,
      cut_short: !!report.cut_short,
      // What the text report says first: what to change, how the bytes moved, where the time went.
      verdict: v && v.headline ? { headline: v.headline, lines: [...(v.moved || []).map((m) => m.text), v.time] } : null,
      devices,
      findings: shown.slice(0, 3).map((f) => ({ kind: f.kind, title: f.title, saving_ns: f.saving_ns, saves: f.saves })),
    };
  }

  const ms = (ns_) => ns.time(ns_ / 1000);

  function draw(root, report) {
    const f = figures(report);
    root.replaceChildren();
    const line = (cls, ...parts) => {
      const div = document.createElement('div');
      div.className = cls;
      div.append(...parts);
      root.append(div);
      return div;
    };
    const strong = (text) => { const b = document.createElement('b'); b.textContent = text; return b; };
    line('wall', strong(`${ms(f.wall_ns)} wall`),
      f.cut_short ? ' (the trace was cut short: to its last event)' : '',
      ` · ${f.devices.length} device${f.devices.length === 1 ? '' : 's'}`);
    if (f.verdict) {
      line('verdict', strong('Verdict: '), f.verdict.headline);
      for (const l of f.verdict.lines) line('verdict-line', l);
    }
    for (const d of f.devices) {
      const div = line('device-line', strong(`device #${d.index}`), ` ${d.name} · ${d.rules} rules · `);
      const basis = document.createElement('span');
      basis.className = d.basis === 'measured' ? 'basis measured' : 'basis projected';
      basis.textContent = d.basis === 'measured' ? 'measured' :
        `transfer times ${d.basis}; kernels measured on this device; busy and idle ` +
        (d.busy_projected ? 'of the run as projected' : 'measured on this device');
      div.append(basis);
      // A bar over the device's span: transfers by path, kernels, and idle.
      const bar = document.createElement('div');
      bar.className = 'bar';
      const whole = Math.max(d.span_ns, d.transfers_ns + d.kernels_ns, 1);
      const seg = (ns_, color, title) => {
        if (!(ns_ > 0)) return;
        const s = document.createElement('span');
        s.style.width = `${(100 * ns_ / whole).toFixed(3)}%`;
        s.style.background = color;
        s.title = title;
        bar.append(s);
      };
      const parts = [];
      for (const [path, t] of Object.entries(d.paths).sort((a, b) => b[1] - a[1])) {
        seg(t, ns.PATHS[path] || '#000', `${path}: ${ms(t)}`);
        if (t > 0) parts.push(`${path} ${ms(t)}`);
      }
      seg(d.kernels_ns, ns.KINDS.kernel, `kernels: ${ms(d.kernels_ns)}`);
      const text = document.createElement('div');
      text.className = 'sub';
      // Whole figures: `~` where they count the commands sampling left untimed, at their estimate.
      const est = d.sampled ? '~' : '';
      text.textContent = `transfers ${est}${ms(d.transfers_ns)}${parts.length ? ' (' + parts.join(', ') + ')' : ''}` +
        ` · kernels ${ms(d.kernels_ns)} · busy ${est}${ms(d.busy_ns)} · idle ${est}${ms(d.idle_ns)} of a ${ms(d.span_ns)} span` +
        (d.sampled ? ` · ~: with ~${ms(d.extrapolated_ns)} estimated for ${d.sampled} commands sampling left untimed` : '');
      root.append(bar, text);
    }
    const ol = document.createElement('ol');
    ol.className = 'top';
    for (const x of f.findings) {
      const li = document.createElement('li');
      li.append(strong(x.title), ` — ${/^saves /.test(x.saves) ? x.saves : 'saves ' + x.saves}`);
      ol.append(li);
    }
    if (f.findings.length) {
      line('top-title', 'Top findings:');
      root.append(ol);
    } else {
      line('top-title', 'No finding would save 1% of the wall time or more.');
    }
    return f;
  }

  ns.header = { figures, draw };
})(window.clxfer);
