// Which slices Chrome DevTools' Performance panel binds trace.json's arrows to: its own trace
// engine (@paulirish/trace_engine, from scripts/fetch-trace-engine) parses the file, and this
// prints, as JSON on stdout, the flow events it read and every flow it built with the slices at
// its ends.
//   node devtools-flows.mjs ENGINE_DIR TRACE_JSON
import fs from 'node:fs';
import path from 'node:path';

const [engineDir, traceFile] = process.argv.slice(2);
// The engine expects a browser's globals; two it touches outside a page.
globalThis.DOMRect ??= class {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};
URL.parse ??= (url, base) => {  // Node.js 18 (Debian 12) has no URL.parse
  try {
    return new URL(url, base);
  } catch {
    return null;
  }
};
const Trace = await import(
    path.join(engineDir, 'node_modules/@paulirish/trace_engine/models/trace/trace.js'));

const doc = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
const events = doc.traceEvents ?? doc;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const flows = model.parsedTrace().data.Flows.flows;
const slice = (e) => ({name: e.name, cat: e.cat, ts: e.ts, pid: e.pid, tid: e.tid});
console.log(JSON.stringify({
  flow_events: events.filter((e) => e.ph === 's' || e.ph === 'f').length,
  flows: flows.map((flow) => flow.map(slice)),
}));
