// The README's pictures of the viewer: the header and the timeline of a trace served by
// `clxfer view`, on the stretch where commands ran, with the largest transfer's details open.
// Usage: node shots.mjs URL OUT_PREFIX
import { chromium } from 'playwright-core';

const [url, out] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(url);
  await page.waitForFunction(() => window.clxferViewer?.status === 'ready');
  // The largest transfer that has a device slice: its details, and the view around it.
  await page.evaluate(() => {
    const s = window.clxferViewer;
    const m = s.model;
    let best = null;
    for (const [id, c] of m.commands) {
      if (!c.host || !c.device) continue;
      const a = m.events[m.tracks[c.host.track].idx[c.host.slice]].args;
      if (a.path && (!best || Number(a.bytes) > best.bytes)) best = { id, bytes: Number(a.bytes), c };
    }
    const t = s.timeline;
    if (!best) return;
    // The stretch where commands ran: from the first enqueue to the last device slice's end.
    let [from, to] = [Infinity, -Infinity];
    for (const c of m.commands.values()) {
      for (const at of [c.host, c.device]) {
        if (!at) continue;
        from = Math.min(from, m.tracks[at.track].starts[at.slice]);
        to = Math.max(to, m.tracks[at.track].ends[at.slice]);
      }
    }
    const pad = (to - from) * 0.02;
    t.view = { start: from - pad, end: to + pad };
    t.select(best.c.host);
  });
  await page.locator('#summary-section').screenshot({ path: `${out}-header.png` });
  await page.locator('#timeline-section').screenshot({ path: `${out}-timeline.png` });
} finally {
  await browser.close();
}
