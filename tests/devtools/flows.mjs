// DevTools' trace engine (npm @paulirish/trace_engine) over clxfer traces: how many of each kind
// of flow (by name: `enqueue`, `wait`) the trace holds, and how many the engine joins to two
// slices. Prints one JSON line per trace: {"trace": PATH, "<name>": [in the trace, joined], ...}.
// Usage: node flows.mjs TRACE...
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};

async function joined(events) {
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  return model.parsedTrace().data.Flows.flows.length;
}

for (const path of process.argv.slice(2)) {
  const text = fs.readFileSync(path, 'utf8');
  const all = JSON.parse(text);
  const events = Array.isArray(all) ? all : all.traceEvents;
  const isFlow = e => e.ph === 's' || e.ph === 't' || e.ph === 'f';
  const names = [...new Set(events.filter(isFlow).map(e => e.name))].sort();
  const out = {trace: path};
  for (const name of names) {
    const starts = events.filter(e => e.ph === 's' && e.name === name).length;
    // The engine over the trace with only this kind of flow.
    const only = events.filter(e => !isFlow(e) || e.name === name);
    out[name] = [starts, await joined(only)];
  }
  console.log(JSON.stringify(out));
}
