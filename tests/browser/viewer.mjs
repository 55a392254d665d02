// Loads the viewer in headless Chromium (Debian's) and reports what it shows, as JSON on stdout;
// tests/viewer.rs checks it against the trace and its report.
// Usage: node viewer.mjs URL SCREENSHOT_DIR MALFORMED_FILE REPORT_FILE
import { chromium } from 'playwright-core';

const [url, shots, malformed, reportFile] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  await page.goto(url);
  await page.waitForFunction(() => ['ready', 'error'].includes(window.clxferViewer?.status));
  const shown = await page.evaluate(() => {
    const s = window.clxferViewer;
    const scatter = s.scatter;
    return {
      status: s.status,
      error: s.error,
      points: s.points,
      datasets: scatter.data.datasets
        .filter((d) => d.type === 'scatter')
        .map((d) => ({
          path: d.label, color: d.backgroundColor, points: d.data.length,
          max_gbps: Math.max(...d.data.map((p) => p.y)), times: [...new Set(d.data.map((p) => p.time))],
        })),
      legend: scatter.legend.legendItems.map((i) => ({ text: i.text, color: i.fillStyle })),
      best_lines: scatter.data.datasets.filter((d) => d.isBest).map((d) => d.label),
      findings: [...document.querySelectorAll('#findings > li')].map((li) => li.innerText),
      device_charts: document.querySelectorAll('#devices canvas').length,
      perfetto_enabled: !document.getElementById('perfetto').disabled,
    };
  });
  await page.screenshot({ path: `${shots}/viewer.png`, fullPage: true });
  // A malformed file, opened with the file picker.
  await page.setInputFiles('#file', malformed);
  await page.waitForFunction(() => window.clxferViewer.status === 'error');
  const malformedShown = await page.evaluate(() => ({
    visible: !document.getElementById('error').hidden,
    text: document.getElementById('error').textContent,
    charts_hidden: document.getElementById('points-section').hidden,
  }));
  await page.screenshot({ path: `${shots}/viewer-malformed.png` });
  // A report (clxfer report --format json), opened with the file picker: findings, no points.
  await page.setInputFiles('#file', reportFile);
  await page.waitForFunction(() => window.clxferViewer.status === 'ready');
  const reportShown = await page.evaluate(() => ({
    findings: document.querySelectorAll('#findings > li').length,
    points_hidden: document.getElementById('points-section').hidden,
    device_charts: document.querySelectorAll('#devices canvas').length,
  }));
  console.log(JSON.stringify({ shown, malformed: malformedShown, report: reportShown, errors }));
} finally {
  await browser.close();
}
