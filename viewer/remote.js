// The model of a trace too large for this page to read whole, which `clxfer view` has indexed
// (src/trace/index/): its tracks come from the server (`tracks`), each view's slices at the detail
// its pixels need (`slices`: those narrower than a pixel merged into one group per pixel column,
// which says how many it stands for), the arrows in it (`flows`) and a slice's details on a click
// (`slice`). The timeline draws from the latest view's answer (timeline.js).
'use strict';

(function (ns) {
  async function json(url) {
    const r = await fetch(url, { cache: 'no-store' });
    const body = await r.json().catch(() => null);
    if (!r.ok) throw new Error((body && body.error) || `HTTP ${r.status}`);
    return body;
  }

  // How far the server has got: { read, total, index: {done, error, ms}, report: {done, error} }.
  ns.serverStatus = () => json('status.json');

  // The model of the indexed trace: its tracks (named as model.js names them), span and
  // processes; its views and details asked for as they are needed.
  async function open() {
    const t = await json('tracks');
    // The server's colour words as this page's colour indices.
    const colour = t.colours.map((w) => ns.COLOR[w] ?? ns.COLOR.unknown);
    const tracks = t.tracks.map((x, i) => {
      const track = { key: `${x.pid}/${x.tid}`, pid: x.pid, tid: x.tid, device: x.device, count: x.count,
        colors: x.colours.map((c) => colour[c]), index: i };
      Object.assign(track, ns.trackName(track, x.process, x.thread));
      return track;
    });
    const kinds = t.arrow_kinds;
    let start = t.start, end = t.end;
    if (!(end > start)) { start = 0; end = 1; }
    return {
      indexed: true, tracks, start, end, processes: t.processes, info: t,
      // No scatter: its points would be every transfer of the trace.
      points: [], left: {}, total: 0, flows: [], commands: new Map(),
      // The slices and arrows of the view from `from` to `to` (µs), `px` pixels wide: per track,
      // its groups ({start, end, color, count, first, name}) and how many slices they stand for.
      async window(from, to, px, arrowKinds) {
        const q = `from=${from}&to=${to}&px=${Math.max(1, Math.round(px))}`;
        const shown = kinds.filter((k) => arrowKinds[k] !== false).join(',');
        const [s, f] = await Promise.all([json(`slices?${q}`), json(`flows?${q}&kinds=${shown}`)]);
        const byTrack = [];
        for (const x of s.tracks) {
          const groups = [];
          const g = x.groups;
          for (let k = 0; k < g.length; k += 6) {
            groups.push({ start: g[k], end: g[k + 1], color: colour[g[k + 2]], count: g[k + 3], first: g[k + 4],
              name: g[k + 5] >= 0 ? s.names[g[k + 5]] : null });
          }
          byTrack[x.track] = { groups, n: x.n };
        }
        const flows = [];
        for (let k = 0; k < f.arrows.length; k += 5) {
          const a = f.arrows;
          flows.push({ t0: a[k], track0: a[k + 1], t1: a[k + 2], track1: a[k + 3], name: kinds[a[k + 4]] });
        }
        return { from, to, px, tracks: byTrack, flows, over: f.over };
      },
      // Slice `i` of track `track`: { event, host, device }, each read back whole.
      details(track, i) { return json(`slice?track=${track}&i=${i}`); },
    };
  }

  ns.remote = { open };
})(window.clxfer);
