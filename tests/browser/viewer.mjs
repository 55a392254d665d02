// Loads the viewer in headless Chromium (Debian's), uses it as a person would (zoom, click, hover,
// the Perfetto button with no internet, a malformed file, a report, the page opened from disk)
// and reports what it showed, as JSON on stdout; tests/viewer.rs checks it against the trace and
// its report.
// Usage: node viewer.mjs URL SCREENSHOT_DIR MALFORMED_FILE REPORT_FILE TRACE_FILE [BIG_URL] [TOO_BIG_URL] [UNREADABLE_URL]
//        node viewer.mjs --indexed URL SCREENSHOT_DIR PLAN   (a trace `clxfer view` has indexed: PLAN,
//        JSON, names a window to show and the slices to click; see indexedRun below)
import { chromium } from 'playwright-core';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const indexedMode = process.argv[2] === '--indexed';
const [url, shots, malformed, reportFile, traceFile, bigUrl, tooBigUrl, unreadableUrl] =
  process.argv.slice(indexedMode ? 3 : 2);
const page_ = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../viewer/index.html');
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const ready = (page, timeout = 180000) =>
  page.waitForFunction(() => ['ready', 'error'].includes(window.clxferViewer?.status), null, { timeout });

// Navigates and waits for the page to be drawn. Loads from `clxfer view` used to hang now and then
// (one of the page's scripts never arriving): tiny_http's pool, which served it, left a connection
// unserved behind the browser's idle keep-alive ones on a busy machine. The server is hyper now
// and tests/viewer.rs holds every connection answered; a try that still stalls is said on stderr
// and made again, and a request it left failed still fails the test.
// Opens `url` and waits for the page to be drawn, trying again (at most 3 times) when a try
// stalls; returns the tries it took and the milliseconds of the one that drew.
async function open(page, url, timeout) {
  for (let attempt = 1; ; attempt++) {
    const began = Date.now();
    try {
      await page.goto(url, { waitUntil: 'commit', timeout });
      await ready(page, timeout);
      return { attempts: attempt, ms: Date.now() - began };
    } catch (e) {
      const status = await page.evaluate(() => window.clxferViewer?.status).catch(() => 'unknown');
      console.error(`viewer.mjs: ${url} not drawn (try ${attempt}, status ${status}): ${e.message.split('\n')[0]}`);
      if (attempt === 3) throw e;
    }
  }
}

// What an indexed page shows: its timeline's tracks (with the slices each holds and those the
// view's answer stands for), title, note and processes line.
const indexedShown = (p) => p.evaluate(() => {
  const s = window.clxferViewer;
  const t = s.timeline;
  const sum = t ? t.summary() : null;
  return {
    status: s.status, mode: s.mode, error: s.error, note: s.note, timings: s.timings, report: s.reportStatus || null,
    title: document.getElementById('title').textContent,
    processes: document.getElementById('processes').textContent,
    status_line: document.getElementById('status').textContent,
    timeline: !document.getElementById('timeline-section').hidden,
    summary: !document.getElementById('summary-section').hidden,
    findings: !document.getElementById('findings-section').hidden,
    tracks: sum && sum.tracks, answered: sum && sum.answered, view: sum && sum.view,
    colours: t ? t.model.tracks.map((x) => [...x.colors].sort((a, b) => a - b)) : null,
    legend: [...document.querySelectorAll('#timeline-legend span')].map((e) => e.innerText),
  };
});

// Shows the view from `from` to `to` (µs) and waits for its answer.
async function goTo(p, from, to) {
  await p.evaluate(([a, b]) => window.clxferViewer.timeline.goTo(a, b), [from, to]);
  await p.waitForFunction(() => window.clxferViewer.timeline.settled(), null, { timeout: 120000 });
}

// Clicks time `at` (µs) on track (pid, tid) with the mouse and waits for the details.
async function clickAt(p, pid, tid, at) {
  const pos = await p.evaluate(([pid_, tid_, at_]) => {
    const t = window.clxferViewer.timeline;
    const ti = t.model.tracks.findIndex((x) => x.pid === pid_ && x.tid === tid_);
    return ti < 0 ? null : t.point(ti, at_);
  }, [pid, tid, at]);
  if (!pos) return { details: null };
  await p.locator('#timeline canvas').click({ position: pos });
  await p.waitForFunction(() => {
    const d = document.getElementById('details');
    return !d.hidden && !d.innerText.includes('reading…');
  }, null, { timeout: 120000 });
  return p.evaluate(() => ({ details: document.getElementById('details').innerText,
    selected: window.clxferViewer.timeline.selected && window.clxferViewer.timeline.selected.group }));
}

// Clicks slice {pid, tid, ts, dur} (µs) of an indexed page, zoomed so that it is wide.
async function clickSlice(p, s) {
  const span = Math.max(s.dur * 6, 2);
  await goTo(p, s.ts + s.dur / 2 - span / 2, s.ts + s.dur / 2 + span / 2);
  return clickAt(p, s.pid, s.tid, s.ts + s.dur / 2);
}

// A trace `clxfer view` has indexed: the first view (its time from navigation), a zoom by keys,
// the window PLAN names (`window`: [from, to] µs), and a click on each of PLAN's `clicks` ({pid,
// tid, ts, dur} µs) and on a merged group (`merged`: {pid, tid, at} at the first view).
async function indexedRun(page, url, plan) {
  const opened = await open(page, url, 600000);
  const first = await indexedShown(page);
  first.wall_ms = opened.ms;
  await page.screenshot({ path: `${shots}/indexed-first.png` });
  const merged = plan.merged ? await clickAt(page, plan.merged.pid, plan.merged.tid, plan.merged.at) : null;
  await page.locator('#timeline canvas').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('w');
  await page.waitForFunction(() => window.clxferViewer.timeline.settled(), null, { timeout: 120000 });
  const keyed = await indexedShown(page);
  await goTo(page, plan.window[0], plan.window[1]);
  const windowed = await indexedShown(page);
  await page.locator('#timeline-section').screenshot({ path: `${shots}/indexed-window.png` });
  const clicks = [];
  for (const c of plan.clicks) clicks.push(await clickSlice(page, c));
  await page.locator('#timeline-section').screenshot({ path: `${shots}/indexed-click.png` });
  return { first, merged, keyed, window: windowed, clicks };
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  // No internet here, and none assumed: ui.perfetto.dev is unreachable for certain.
  await context.route('https://ui.perfetto.dev/**', (r) => r.abort('internetdisconnected'));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // The Perfetto probe's refusal (the route above) is logged by the browser itself.
  page.on('console', (m) => m.type() === 'error' && !m.text().includes('ERR_INTERNET_DISCONNECTED') && errors.push(m.text()));
  page.on('requestfailed', (r) => r.url().startsWith('https://ui.perfetto.dev') || errors.push(`request failed: ${r.url()}`));
  if (indexedMode) {
    const plan = JSON.parse(malformed);
    const got = await indexedRun(page, url, plan);
    console.log(JSON.stringify({ ...got, errors }));
    await browser.close();
    process.exit(0);
  }
  // The bare URL `clxfer view` prints.
  await open(page, url, 60000);
  const shown = await page.evaluate(() => {
    const s = window.clxferViewer;
    const scatter = s.scatter;
    const axis = (a) => ({ ticks: a.ticks.map((t) => t.value), min: a.min, max: a.max });
    const pts = scatter.data.datasets.filter((d) => d.type === 'scatter').flatMap((d) => d.data);
    return {
      status: s.status,
      error: s.error,
      points: s.points,
      datasets: scatter.data.datasets
        .filter((d) => d.type === 'scatter')
        .map((d) => ({
          path: d.label, color: d.backgroundColor, points: d.data.reduce((a, p) => a + p.n, 0),
          max_gbps: Math.max(...d.data.map((p) => p.y)), times: [...new Set(d.data.map((p) => p.time))],
        })),
      legend: scatter.legend.legendItems.map((i) => ({ text: i.text, color: i.fillStyle })),
      best_lines: scatter.data.datasets.filter((d) => d.isBest).map((d) => d.label),
      axes: {
        x: axis(scatter.scales.x), y: axis(scatter.scales.y),
        data: { x: [Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x))],
                y: [Math.min(...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y))] },
      },
      caption: s.caption,
      header: s.header,
      header_text: document.getElementById('summary').innerText,
      timeline: s.timeline.summary(),
      findings: [...document.querySelectorAll('#findings > li')].map((li) => li.innerText),
      device_charts: document.querySelectorAll('#devices canvas').length,
      bar_axes: s.charts.filter((c) => c.config.type === 'bar').map((c) => Object.keys(c.scales).filter((k) => k !== 'x')),
      perfetto_enabled: !document.getElementById('perfetto').disabled,
      max_gbps: window.clxfer.MAX_GBPS,
    };
  });
  await page.screenshot({ path: `${shots}/viewer.png`, fullPage: true });
  await page.locator('#summary-section').screenshot({ path: `${shots}/header.png` });

  // Zoom: the W key on the focused timeline, then the wheel over it.
  const canvas = page.locator('#timeline canvas');
  const box = await canvas.boundingBox();
  const before = await page.evaluate(() => window.clxferViewer.timeline.summary().view);
  await canvas.focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('w');
  const keyed = await page.evaluate(() => window.clxferViewer.timeline.summary().view);
  await page.mouse.move(box.x + box.width * 0.6, box.y + 30);
  await page.mouse.wheel(0, -400);
  const wheeled = await page.evaluate(() => window.clxferViewer.timeline.summary().view);
  await page.keyboard.press('0');
  const reset = await page.evaluate(() => window.clxferViewer.timeline.summary().view);

  // A click on a transfer's host slice, then on its device slice: the details name the
  // command's classification.
  const clicks = [];
  const command = await page.evaluate(() => {
    const m = window.clxferViewer.model;
    for (const [id, c] of m.commands) {
      const h = c.host && m.events[m.tracks[c.host.track].idx[c.host.slice]];
      if (c.device && h && h.args.path && h.args.reasons) return id;
    }
    return null;
  });
  for (const side of ['host', 'device']) {
    const at = await page.evaluate(([c, s]) => window.clxferViewer.timeline.locate(c, s), [command, side]);
    await page.mouse.click(at.x, at.y);
    clicks.push(await page.evaluate(() => {
      const t = window.clxferViewer.timeline;
      const sel = t.selected;
      const e = sel && t.model.events[t.model.tracks[sel.track].idx[sel.slice]];
      return { command: e && e.args && e.args.command, name: e && e.name, details: document.getElementById('details').innerText };
    }));
  }
  await page.locator('#timeline-section').screenshot({ path: `${shots}/timeline.png` });
  // The command's host and device slices (µs), to click on the indexed page below.
  const sides = await page.evaluate((id) => {
    const m = window.clxferViewer.model;
    const c = m.commands.get(id);
    const at = (x) => {
      const t = m.tracks[x.track];
      const e = m.events[t.idx[x.slice]];
      return { pid: t.pid, tid: t.tid, ts: e.ts, dur: e.dur || 0 };
    };
    return [at(c.host), at(c.device)];
  }, command);
  // Each track's colours, as the indexed page's are compared with them.
  const wholeColours = await page.evaluate(() => window.clxferViewer.timeline.model.tracks.map((t) => [...new Set(t.colors)].sort((a, b) => a - b)));

  // The tooltip over the most crowded spot of the scatter stays inside the chart.
  await page.locator('#points').scrollIntoViewIfNeeded();
  const spot = await page.evaluate(() => {
    const chart = window.clxferViewer.scatter;
    const all = [];
    chart.data.datasets.forEach((d, i) => {
      if (d.type !== 'scatter') return;
      chart.getDatasetMeta(i).data.forEach((el, j) => all.push({ x: el.x, y: el.y, n: d.data[j].n }));
    });
    let best = null;
    for (const p of all) {
      const near = all.filter((q) => Math.abs(q.x - p.x) <= 4 && Math.abs(q.y - p.y) <= 4).reduce((a, q) => a + q.n, 0);
      if (!best || near > best.near) best = { ...p, near };
    }
    const r = chart.canvas.getBoundingClientRect();
    return { x: r.left + best.x, y: r.top + best.y, near: best.near };
  });
  await page.mouse.move(spot.x, spot.y);
  await page.waitForFunction(() => !document.getElementById('tip').hidden, null, { timeout: 5000 });
  const tip = await page.evaluate(() => {
    const el = document.getElementById('tip');
    const t = el.getBoundingClientRect();
    const b = el.parentNode.getBoundingClientRect();
    return { tip: { left: t.left, top: t.top, right: t.right, bottom: t.bottom },
             box: { left: b.left, top: b.top, right: b.right, bottom: b.bottom }, text: el.innerText };
  });
  tip.near = spot.near;
  await page.locator('#points-section').screenshot({ path: `${shots}/tooltip.png` });

  // "Open in Perfetto" with no internet: a plain message, no error tab left open.
  await page.click('#perfetto');
  await page.waitForFunction(() => window.clxferViewer.perfetto === 'unreachable', null, { timeout: 15000 });
  const perfetto = await page.evaluate(() => document.getElementById('status').innerText);
  const pagesOpen = context.pages().length;

  // A malformed file, opened with the file picker.
  await page.setInputFiles('#file', malformed);
  await page.waitForFunction(() => window.clxferViewer.status === 'error');
  const malformedShown = await page.evaluate(() => ({
    visible: !document.getElementById('error').hidden,
    text: document.getElementById('error').textContent,
    charts_hidden: document.getElementById('points-section').hidden,
  }));
  await page.screenshot({ path: `${shots}/viewer-malformed.png` });
  // A report (clxfer report --format json), opened with the file picker: header and findings,
  // no points.
  await page.setInputFiles('#file', reportFile);
  await page.waitForFunction(() => window.clxferViewer.status === 'ready');
  const reportShown = await page.evaluate(() => ({
    findings: document.querySelectorAll('#findings > li').length,
    points_hidden: document.getElementById('points-section').hidden,
    timeline_hidden: document.getElementById('timeline-section').hidden,
    header: window.clxferViewer.header,
    device_charts: document.querySelectorAll('#devices canvas').length,
  }));

  // The page from disk, no server: the trace opened with the file picker.
  const disk = await context.newPage();
  disk.on('pageerror', (e) => errors.push(`from disk: ${e.message}`));
  await disk.goto(pathToFileURL(page_).href);
  await disk.waitForFunction(() => window.clxferViewer?.status === 'empty');
  await disk.setInputFiles('#file', traceFile);
  await ready(disk);
  const fromDisk = await disk.evaluate(() => ({
    status: window.clxferViewer.status,
    tracks: window.clxferViewer.timeline.summary().tracks.length,
    points: window.clxferViewer.points,
  }));
  await disk.close();

  // A trace of a million events: the time to its first view, from navigation to a drawn page.
  let big = null;
  if (bigUrl) {
    const p = await context.newPage();
    p.on('pageerror', (e) => errors.push(`big: ${e.message}`));
    const opened = await open(p, bigUrl, 90000);
    big = await p.evaluate(() => {
      const s = window.clxferViewer;
      const t = s.timeline;
      const draws = [];
      const drawn = () => { const d = t.summary(); return { ms: d.drawMs, visits: d.drawVisits, width: d.drawWidth }; };
      for (const f of [0.5, 0.5, 0.5, 4, 4]) { t.zoom(f); draws.push(drawn()); }
      t.reset();
      draws.push(drawn());
      return { status: s.status, error: s.error, timings: s.timings, draws, points: s.points,
               slices: t.summary().tracks.reduce((a, x) => a + x.slices, 0), tracks: t.summary().tracks };
    });
    big.wall_ms = opened.ms;
    big.attempts = opened.attempts;
    await p.screenshot({ path: `${shots}/viewer-big.png` });
    await p.close();
  }
  // The same trace as if more than the page could read whole: drawn from the server's index,
  // its report beside; the chosen command's host and device slices clicked.
  let tooBig = null;
  if (tooBigUrl) {
    const p = await context.newPage();
    p.on('pageerror', (e) => errors.push(`too big: ${e.message}`));
    await open(p, tooBigUrl, 90000);
    await p.waitForFunction(() => window.clxferViewer.reportStatus, null, { timeout: 120000 });
    tooBig = await indexedShown(p);
    tooBig.clicks = [];
    for (const side of sides) tooBig.clicks.push(await clickSlice(p, side));
    await p.screenshot({ path: `${shots}/viewer-indexed.png`, fullPage: true });
    await p.close();
  }
  // A file that cannot be read, past the page's limit: the page says why.
  let unreadable = null;
  if (unreadableUrl) {
    const p = await context.newPage();
    await open(p, unreadableUrl, 90000);
    unreadable = await p.evaluate(() => ({
      status: window.clxferViewer.status,
      error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent,
    }));
    await p.close();
  }
  console.log(JSON.stringify({
    too_big: tooBig, unreadable, whole_colours: wholeColours, shown, zoom: { before, keyed, wheeled, reset }, clicks, command, tip, perfetto, pages_open: pagesOpen,
    malformed: malformedShown, report: reportShown, from_disk: fromDisk, big, errors,
  }));
} finally {
  await browser.close();
}
