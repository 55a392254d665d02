// The clxfer viewer: where a run's time went, at a glance, with no internet. The analysis is
// clxfer's own: the header, the findings and the per-device charts come from the report (`clxfer
// report --format json`), which a trace carries in its last event and `clxfer view` serves beside
// it; the timeline and the scatter are drawn from the trace's own events (model.js).
'use strict';

(function (ns) {
  const $ = (id) => document.getElementById(id);
  const SECTIONS = ['summary-section', 'timeline-section', 'points-section', 'findings-section', 'devices-section'];
  const state = { status: 'empty', points: 0, trace: null, name: '', charts: [] };
  window.clxferViewer = state;

  function fail(message) {
    state.status = 'error';
    state.error = message;
    $('error').textContent = message;
    $('error').hidden = false;
    for (const id of SECTIONS) $(id).hidden = true;
    $('perfetto').disabled = true;
  }

  // A line under the page's header (the Perfetto button's outcome).
  function say(message, problem) {
    $('status').textContent = message;
    $('status').className = problem ? 'problem' : '';
    $('status').hidden = !message;
  }

  // Every transfer accounted for: those plotted, by what their time is, and those not, by why.
  function caption(model, drawn) {
    const p = model.points;
    const timed = p.filter((x) => x.time === 'device').length;
    const projected = p.filter((x) => x.time.startsWith('projected')).length;
    const host = p.length - timed - projected;
    const plotted = [];
    if (timed) plotted.push(`${timed} timed on the device`);
    if (projected) plotted.push(`${projected} projected by the cost model of rules forced on their device`);
    if (host) plotted.push(`${host} by the host time of their blocking call`);
    const l = model.left;
    const not = [];
    if (l.no_bytes) not.push(`${l.no_bytes} moved no bytes`);
    if (l.sampled) not.push(`${l.sampled} left untimed by sampling (the report extrapolates their time)`);
    if (l.unavailable) not.push(`${l.unavailable} without a usable device time`);
    if (l.implausible) not.push(`${l.implausible} whose device time no device can take (the report's finding says which)`);
    if (l.untimed) not.push(`${l.untimed} non-blocking with no device time`);
    if (l.no_projection) not.push(`${l.no_projection} without a projection (the cost model has no figure for their path)`);
    let text = `${model.total} transfers: ${p.length} plotted${plotted.length ? ' (' + plotted.join(', ') + ')' : ''}`;
    if (not.length) text += `; not plotted: ${not.join(', ')}`;
    text += '.';
    if (drawn < p.length) text += ` Drawn as ${drawn} points: transfers that land on one spot are one point, which counts them.`;
    $('points-note').textContent = `${text} Hover a point for its call, flags and reasons.`;
    state.caption = { total: model.total, plotted: p.length, left: { ...l }, text };
  }

  function drawPoints(model, report) {
    $('points-section').hidden = false;
    const chart = ns.scatter($('points'), $('tip'), model.points, report);
    state.charts.push(chart);
    state.scatter = chart;
    state.points = model.points.length;
    const drawn = chart.data.datasets.filter((d) => d.type === 'scatter').reduce((a, d) => a + d.data.length, 0);
    state.paths = Object.fromEntries(chart.data.datasets.filter((d) => d.type === 'scatter').map((d) => [d.label, d.backgroundColor]));
    caption(model, drawn);
  }

  // What the header says of the trace's processes: one's program and pid, or a merge's count,
  // ranks and hosts (`clxfer merge` of a job's ranks), and whose report the page shows.
  function whose(processes, report, name) {
    const ps = processes || [];
    if (ps.length <= 1) {
      const p = report || ps[0];
      return { title: p ? `${p.program} (pid ${p.pid}) · ${name}` : name, line: '' };
    }
    const programs = [...new Set(ps.map((p) => p.program).filter(Boolean))];
    const ranks = ps.map((p) => p.rank).filter((r) => r !== undefined && r !== null).sort((a, b) => a - b);
    const of = ps.map((p) => p.ranks).find((r) => r !== undefined && r !== null);
    const hosts = [...new Set(ps.map((p) => p.host).filter(Boolean))];
    const contiguous = ranks.length > 1 && ranks.every((r, i) => i === 0 || r === ranks[i - 1] + 1);
    const rankText = !ranks.length ? '' : ` (rank${ranks.length > 1 ? 's' : ''} ` +
      `${contiguous ? `${ranks[0]}–${ranks[ranks.length - 1]}` : ranks.join(', ')}${of ? ` of ${of}` : ''})`;
    const hostText = hosts.length ? ` on ${hosts.length === 1 ? 'host' : `${hosts.length} hosts:`} ${hosts.join(', ')}` : '';
    const title = `${programs.join(', ')} · ${ps.length} processes${rankText}${hostText} · ${name}`;
    let line = `${ps.length} processes${rankText}${hostText}.`;
    if (report) {
      const first = ps.find((p) => p.pid === report.pid) || ps[0];
      const place = first.rank !== undefined && first.rank !== null ? `rank ${first.rank}${first.host ? ` on ${first.host}` : ''}, ` : '';
      line += ` The report below is the first process's (${report.program}, ${place}pid ${report.pid}): \`clxfer report\` gives each.`;
    }
    return { title, line };
  }

  function showWhose(processes, report, name) {
    const w = whose(processes, report, name);
    $('title').textContent = w.title;
    $('processes').textContent = w.line;
    $('processes').hidden = !w.line;
    state.whose = w;
  }

  // The report's parts of the page: the header, the findings, the per-device charts.
  function drawReport(report) {
    state.report = report;
    $('summary-section').hidden = false;
    state.header = ns.header.draw($('summary'), report);
    drawFindings(report);
    $('devices-section').hidden = false;
    $('devices').replaceChildren();
    state.charts.push(...ns.deviceBars($('devices'), report));
  }

  function drawTimeline(model) {
    $('timeline-section').hidden = false;
    const t = new ns.Timeline($('timeline'), $('details'), model);
    state.timeline = t;
    const legend = $('timeline-legend');
    legend.replaceChildren();
    const key = (color, text) => {
      const s = document.createElement('span');
      const sw = document.createElement('i');
      sw.style.background = color;
      s.append(sw, text);
      legend.append(s);
    };
    const used = new Set();
    for (const tr of model.tracks) for (const c of tr.colors) used.add(c);
    const names = [...Object.keys(ns.PATHS), 'kernel', 'wait (clFinish, clWaitForEvents)', 'other call'];
    [...used].sort((a, b) => a - b).forEach((c) => key(ns.COLORS[c], names[c]));
    const note = () => {
      const s = t.summary();
      let text = s.hiddenArrows ? `Arrows hidden: over ${s.hiddenArrows - 1} in view; zoom in to see them.` : '';
      if (model.indexed && t.win) {
        const n = t.win.tracks.reduce((a, x) => a + (x ? x.n : 0), 0);
        const drawn = t.win.tracks.reduce((a, x) => a + (x ? x.groups.length : 0), 0);
        text = `This view: ${n.toLocaleString('en')} slices, drawn as ${drawn.toLocaleString('en')} ` +
          'rectangles (those narrower than a pixel merged per pixel column; a click on one says how ' +
          `many it stands for). ${text}`;
      }
      $('timeline-note').textContent = text;
    };
    t.onDraw = note;
    for (const name of ['enqueue', 'wait', 'race']) {
      const box = $(`arrows-${name}`);
      box.checked = true;
      box.onchange = () => { t.arrows[name] = box.checked; t.draw(); };
    }
    $('timeline-reset').onclick = () => t.reset();
    note();
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

  function show(text, name, served) {
    for (const c of state.charts) c.destroy();
    state.charts = [];
    $('error').hidden = true;
    $('hint').hidden = true;
    for (const id of SECTIONS) $(id).hidden = true;
    const t0 = performance.now();
    let data;
    try {
      data = ns.parse(text);
    } catch (e) {
      return fail(`${name} is not JSON: ${e.message}`);
    }
    const parsed = performance.now();
    const events = Array.isArray(data) ? data : data && data.traceEvents;
    let report = served || null;
    let model = null;
    if (Array.isArray(events)) {
      if (!events.some((e) => e && e.name === 'clxfer trace start')) {
        return fail(`${name} is a trace, but not one clxfer wrote (no "clxfer trace start" event).`);
      }
      const end = events.find((e) => e && e.name === 'clxfer trace end');
      const embedded = (end && end.args && end.args.report) || null;
      // Past CLXFER_TRACE_LIMIT_MIB the events are a part of the run; the report written at
      // exit is the whole run's.
      const limited = end && end.args && end.args.limit_left_out > 0;
      report = (limited && embedded) || report || embedded;
      state.trace = text;
      model = ns.build(events);
      state.model = model;
      $('perfetto').disabled = false;
    } else if (data && Array.isArray(data.findings) && Array.isArray(data.devices)) {
      report = data;
      state.trace = null;
      state.points = 0;
      state.timeline = null;
      $('perfetto').disabled = true;
    } else {
      return fail(`${name} is neither a clxfer trace nor a clxfer report.`);
    }
    const built = performance.now();
    state.name = name;
    state.report = report;
    state.mode = model ? 'whole' : 'report';
    showWhose(model && model.processes, report, name);
    if (report) {
      $('summary-section').hidden = false;
      state.header = ns.header.draw($('summary'), report);
    }
    if (model) {
      drawTimeline(model);
      drawPoints(model, report);
    }
    if (report) {
      drawFindings(report);
      $('devices-section').hidden = false;
      $('devices').replaceChildren();
      state.charts.push(...ns.deviceBars($('devices'), report));
    } else {
      $('error').textContent = `${name} has no report (the program did not exit normally?): ` +
        'run `clxfer view` on it, which computes one.';
      $('error').hidden = false;
    }
    const drawn = performance.now();
    state.timings = { parse_ms: parsed - t0, model_ms: built - parsed, draw_ms: drawn - built, ready_ms: drawn };
    state.status = 'ready';
  }

  // Chromium's strings hold at most 512 MiB; the page reads a trace whole.
  const FILE_LIMIT = 512 * 1024 * 1024 - 64;

  function readFile(file) {
    if (file.size > FILE_LIMIT) {
      return fail(`${file.name} (${(file.size / 1048576).toFixed(0)} MiB) is more than this page can ` +
        'read (a browser holds at most 512 MiB of text): run `clxfer view` on it, which indexes it ' +
        'and shows its timeline view by view, with its report.');
    }
    state.status = 'loading';
    file.text().then((t) => show(t, file.name), (e) => fail(`cannot read ${file.name}: ${e}`));
  }

  // Perfetto's documented way to receive a trace from another page: open it, ping until it
  // answers, then post the buffer. Where ui.perfetto.dev cannot be reached (a cluster node
  // without internet), the page says so instead of leaving an error tab.
  function openInPerfetto() {
    const origin = 'https://ui.perfetto.dev';
    if (!state.trace) return;
    // Opened now, while the click still allows a pop-up; sent to Perfetto once it answers.
    const win = window.open('about:blank');
    const offline = () => {
      if (win) win.close();
      state.perfetto = 'unreachable';
      say(`ui.perfetto.dev cannot be reached from this browser (no internet here?). Everything ` +
        `on this page works offline; for Perfetto, copy ${state.name} to a machine with ` +
        'internet and open it at ui.perfetto.dev.', true);
    };
    if (navigator.onLine === false) return offline();
    say('Opening ui.perfetto.dev…');
    fetch(`${origin}/`, { mode: 'no-cors', cache: 'no-store', signal: AbortSignal.timeout(8000) }).then(() => {
      if (!win) {
        say('The browser blocked the Perfetto window: allow pop-ups for this page.', true);
        return;
      }
      win.location.href = origin;
      const buffer = new TextEncoder().encode(state.trace).buffer;
      const timer = setInterval(() => win.postMessage('PING', origin), 50);
      const giveUp = setTimeout(() => {
        clearInterval(timer);
        say('ui.perfetto.dev opened but did not answer in 30 s: open the trace file there by hand.', true);
      }, 30000);
      window.addEventListener('message', function onMessage(e) {
        if (e.source !== win || e.data !== 'PONG') return;
        clearInterval(timer);
        clearTimeout(giveUp);
        window.removeEventListener('message', onMessage);
        win.postMessage({ perfetto: { buffer, title: state.name, fileName: state.name } }, origin);
        state.perfetto = 'sent';
        say('');
      });
    }, offline);
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // A trace `clxfer view` has indexed (too large to read whole): the timeline as soon as the index
  // is done, drawn from the server's answers (remote.js); the report when computed; where the
  // index failed, why, with the report beside it.
  // The server's status once `done` holds of it, asked every `ms` (`waiting` hears each answer
  // before); a failed request throws.
  async function statusWhen(done, ms, waiting = () => {}) {
    for (;;) {
      const s = await ns.serverStatus();
      if (done(s)) return s;
      waiting(s);
      await sleep(ms);
    }
  }

  async function loadIndexed({ report, name, note }) {
    state.status = 'loading';
    state.mode = 'indexed';
    state.name = name;
    state.note = note;
    $('error').hidden = true;
    $('hint').hidden = true;
    for (const id of SECTIONS) $(id).hidden = true;
    $('title').textContent = name;
    const unreachable = (e) => fail(`cannot reach the server that served this page: ${e.message}`);
    let s;
    try {
      s = await statusWhen((s) => s.index.done, 150, (s) => {
        const read = s.total ? Math.floor(100 * s.read / s.total) : 0;
        say(`${note} Indexing ${name}: ${read}% read…`);
      });
    } catch (e) {
      return unreachable(e);
    }
    state.index = s.index;
    let model = null;
    if (s.index.error) {
      state.note = `${name} cannot be shown on this page: ${s.index.error}. Its report is below ` +
        'where it could be computed.';
      say(state.note, true);
    } else {
      try {
        model = await ns.remote.open();
      } catch (e) {
        return fail(`cannot load the index of ${name}: ${e.message}`);
      }
      state.model = model;
      showWhose(model.processes, null, name);
      drawTimeline(model);
      while (!state.timeline.settled()) {
        if (state.timeline.error) return fail(`cannot load a view of ${name}: ${state.timeline.error}`);
        await sleep(20);
      }
      state.timings = { index_ms: s.index.ms, first_view_ms: performance.now() };
      state.status = 'ready';
      say(`${note} The report is being computed…`);
    }
    // The report, once the server has computed it.
    try {
      s = await statusWhen((s) => s.report.done, 300);
    } catch (e) {
      return unreachable(e);
    }
    if (s.report.error) {
      state.reportStatus = 'error';
      if (!model) return fail(`${state.note} No report either: ${s.report.error}`);
      say(`${note} No report: ${s.report.error}`, true);
      return;
    }
    try {
      const r = await fetch(report, { cache: 'no-store' });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      drawReport(await r.json());
    } catch (e) {
      return fail(`cannot load ${report}: ${e.message}`);
    }
    showWhose(model ? model.processes : [], state.report, name);
    state.reportStatus = 'ready';
    say(model ? note : state.note, !model);
    state.status = 'ready';
  }

  function load({ mode, trace, report, name, note }) {
    if (mode === 'indexed') {
      loadIndexed({ report, name, note });
      return;
    }
    state.status = 'loading';
    // A trace too large for the page (`clxfer view` says why): its report alone, and why.
    if (!trace && report) {
      fetch(report).then((r) => r.text()).then((text) => {
        show(text, name || report);
        state.note = note;
        say(note || '', true);
      }, (e) => fail(`cannot load ${report}: ${e}`));
      return;
    }
    Promise.all([
      fetch(trace).then((r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        return r.text();
      }),
      report ? fetch(report).then((r) => r.json()) : null,
    ]).then(([text, rep]) => show(text, name || trace, rep), (e) => fail(`cannot load ${trace}: ${e}`));
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
    // ?trace=…&report=…&name=… names what to load; without it, `clxfer view` says what it serves
    // (served.json), and a page opened from disk waits for a file.
    const q = new URLSearchParams(location.search);
    if (q.get('trace')) {
      load({ trace: q.get('trace'), report: q.get('report'), name: q.get('name') });
    } else if (location.protocol.startsWith('http')) {
      // Not served by `clxfer view` (no served.json): the page waits for a file.
      fetch('served.json').then((r) => (r.ok ? r.json() : null)).then((s) => s && load(s),
        (e) => fail(`cannot reach the server that served this page: ${e}`));
    }
  }

  init();
})(window.clxfer);
