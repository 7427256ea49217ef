// The sengen web explorer: the tree, the object view, live plots, the clock and the recorders.
// Everything comes from this server's API (/api) and its WebSocket (/api/stream).
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  socket: null, ref: 0, pending: new Map(),
  objects: new Map(),      // path -> {summary, time, values}
  types: new Map(),        // class name -> description
  selected: null,          // {kind: "object", path} | {kind: "class", bus, cls}
  opened: new Set(),       // buses with an interest
  series: new Map(),       // key -> {path, prop, field, points: [[ns, value]]}
  rows: new Map(),         // path -> row of the class table shown
  paused: false,
  dirty: false,            // the plot has something new to draw
};
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
const MAX_POINTS = 20000;
const TABLE_ROWS = 50;

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: body === undefined ? {} : {"content-type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({error: response.statusText}));
  if (response.status === 401) { showLogin(); }
  if (!response.ok) { throw new Error(data.error || response.statusText); }
  return data;
}

function showLogin() { $("login").hidden = false; }

$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    await api("POST", "/api/login", {token: $("token").value});
    $("login").hidden = true;
    start();
  } catch (error) { $("login-error").textContent = error.message; }
});

// -- the stream --------------------------------------------------------------------------------

function request(message) {
  return new Promise((resolve, reject) => {
    const ref = ++state.ref;
    state.pending.set(ref, {resolve, reject});
    state.socket.send(JSON.stringify({...message, ref}));
  });
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/stream`);
  state.socket = socket;
  socket.onopen = () => { $("status").textContent = "live"; state.opened.clear(); refreshBuses(); };
  socket.onclose = () => {
    $("status").textContent = "disconnected: retrying";
    setTimeout(connect, 1000);
  };
  socket.onmessage = (e) => receive(JSON.parse(e.data));
}

function receive(message) {
  switch (message.type) {
    case "ok": case "error": {
      const waiting = state.pending.get(message.ref);
      state.pending.delete(message.ref);
      if (waiting) {
        if (message.type === "ok") { waiting.resolve(message); } else { waiting.reject(new Error(message.error)); }
      }
      break;
    }
    case "added":
      for (const summary of message.objects) {
        if (!state.objects.has(summary.path)) { state.objects.set(summary.path, {summary, time: 0, values: {}}); }
      }
      renderTree();
      break;
    case "removed":
      for (const path of message.paths) { state.objects.delete(path); }
      renderTree();
      break;
    case "changes":
      for (const change of message.objects) { changed(change); }
      break;
    case "event": logEvent(message); break;
    case "result": showResult(message); break;
    case "dropped": logLine(`(${message.events} events dropped: the page fell behind)`); break;
  }
}

function changed(change) {
  const known = state.objects.get(change.path);
  if (!known) { return; }
  known.time = change.time;
  known.values = change.values;
  for (const series of state.series.values()) {
    if (series.path === change.path) {
      const value = pick(change.values[series.prop], series.field);
      if (typeof value === "number") {
        series.points.push([change.time, value]);
        if (series.points.length > MAX_POINTS) { series.points.splice(0, series.points.length - MAX_POINTS); }
        state.dirty = true;
      }
    }
  }
  updateView(change.path);
}

function pick(value, field) {
  if (!field) { return value; }
  for (const part of field.split(".")) { value = value == null ? undefined : value[part]; }
  return value;
}

async function refreshBuses() {
  try {
    const sessions = await api("GET", "/api/sessions");
    for (const session of sessions) {
      for (const bus of session.buses) {
        if (!state.opened.has(bus) && state.socket.readyState === WebSocket.OPEN) {
          state.opened.add(bus);
          await request({op: "open", query: `SELECT * FROM ${bus}`});
        }
      }
    }
    await watch();
  } catch (error) { $("status").textContent = error.message; }
}

function watched() {
  const paths = new Set();
  const selected = state.selected;
  if (selected && selected.kind === "object") { paths.add(selected.path); }
  if (selected && selected.kind === "class") { for (const path of classRows(selected)) { paths.add(path); } }
  for (const series of state.series.values()) { paths.add(series.path); }
  return [...paths];
}

async function watch() {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    await request({op: "watch", paths: watched()});
  }
}

// -- the tree ----------------------------------------------------------------------------------

function renderTree() {
  const needle = $("search").value.toLowerCase();
  const tree = new Map(); // session -> bus -> class -> [summary]
  for (const {summary} of state.objects.values()) {
    if (needle && !summary.path.toLowerCase().includes(needle) && !summary.class.toLowerCase().includes(needle)) { continue; }
    const buses = tree.get(summary.session) || tree.set(summary.session, new Map()).get(summary.session);
    const classes = buses.get(summary.bus) || buses.set(summary.bus, new Map()).get(summary.bus);
    const list = classes.get(summary.class) || classes.set(summary.class, []).get(summary.class);
    list.push(summary);
  }
  const root = $("tree");
  root.replaceChildren();
  for (const [session, buses] of [...tree].sort()) {
    const sessionNode = node(session);
    root.append(sessionNode.item);
    for (const [bus, classes] of [...buses].sort()) {
      const busNode = node(bus.slice(session.length + 1));
      sessionNode.list.append(busNode.item);
      for (const [cls, objects] of [...classes].sort()) {
        const classNode = node(`${cls} (${objects.length})`);
        classNode.label.dataset.cls = cls;
        classNode.label.addEventListener("click", () => select({kind: "class", bus, cls}));
        busNode.list.append(classNode.item);
        for (const summary of objects.sort((a, b) => a.name.localeCompare(b.name))) {
          const item = document.createElement("li");
          item.className = "obj";
          item.textContent = summary.name;
          item.dataset.path = summary.path;
          if (state.selected && state.selected.path === summary.path) { item.classList.add("selected"); }
          item.addEventListener("click", () => select({kind: "object", path: summary.path}));
          classNode.list.append(item);
        }
      }
    }
  }
}

function node(text) {
  const item = document.createElement("li");
  item.className = "node";
  const label = document.createElement("span");
  label.textContent = text;
  const list = document.createElement("ul");
  item.append(label, list);
  return {item, label, list};
}

$("search").addEventListener("input", renderTree);

// -- the object view ---------------------------------------------------------------------------

async function describe(cls) {
  if (!state.types.has(cls)) { state.types.set(cls, await api("GET", `/api/types/${encodeURIComponent(cls)}`)); }
  return state.types.get(cls);
}

async function select(selected) {
  state.selected = selected;
  for (const item of document.querySelectorAll(".obj")) { item.classList.toggle("selected", item.dataset.path === selected.path); }
  if (selected.kind === "object") { await showObject(selected.path); } else { await showClass(selected); }
  await watch();
}

function element(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "dataset") { Object.assign(made.dataset, value); } else { made[key] = value; }
  }
  made.append(...children);
  return made;
}

function text(value) { return JSON.stringify(value); }

function numericFields(value, prefix = "") {
  if (typeof value === "number") { return [prefix]; }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([key, inner]) => numericFields(inner, prefix ? `${prefix}.${key}` : key));
  }
  return [];
}

async function showObject(path) {
  const known = state.objects.get(path);
  const view = $("view");
  if (!known) { view.replaceChildren(element("p", {className: "hint", textContent: `${path} is gone`})); return; }
  const type = await describe(known.summary.class);
  const details = await api("GET", `/api/objects/${encodeURIComponent(path)}`).catch(() => null);
  if (details) { known.values = details.values; known.time = details.time; }
  const owner = details ? `${details.owner.component || details.owner.kind} in ${details.owner.process || "?"}` : known.summary.kind;
  const rows = type.properties.map((prop) => {
    const row = element("tr", {dataset: {prop: prop.name}},
      element("td", {}, prop.name, element("div", {className: "doc", textContent: prop.description})),
      element("td", {className: "value"}),
      element("td", {className: "doc", textContent: `${prop.type.name}, ${prop.category}`}),
      element("td", {className: "actions"}));
    return row;
  });
  const methods = type.methods.filter((m) => !m.local).map((method) => methodForm(path, method));
  view.replaceChildren(
    element("h2", {textContent: path}),
    element("p", {className: "doc", textContent: `${type.name} · ${owner}${type.description ? " · " + type.description : ""}`}),
    element("table", {id: "properties"}, ...rows),
    element("h3", {textContent: "methods"}), ...(methods.length ? methods : [element("p", {className: "hint", textContent: "none"})]),
    element("h3", {textContent: "events"}),
    element("ul", {}, ...type.events.map((e) => element("li", {textContent: `${e.name}(${e.args.map((a) => `${a.name}: ${a.type.name}`).join(", ")}) ${e.description}`}))),
  );
  updateView(path, true);
}

function updateView(path, rebuild = false) {
  const selected = state.selected;
  if (!selected) { return; }
  if (selected.kind === "class") {
    const row = state.rows.get(path);
    if (row) { fillClassRow(row, state.objects.get(path)); }
    return;
  }
  if (selected.path !== path) { return; }
  const known = state.objects.get(path);
  const type = state.types.get(known.summary.class);
  if (!type) { return; }
  for (const prop of type.properties) {
    const row = document.querySelector(`#properties tr[data-prop="${CSS.escape(prop.name)}"]`);
    if (!row) { continue; }
    show(row.querySelector(".value"), text(known.values[prop.name]));
    if (rebuild) { row.querySelector(".actions").replaceChildren(...propertyActions(path, prop, known.values[prop.name])); }
  }
}

function propertyActions(path, prop, value) {
  const actions = numericFields(value).map((field) => element("button", {
    className: "plot", textContent: field ? `plot ${field}` : "plot",
    dataset: {key: field ? `${path}.${prop.name}.${field}` : `${path}.${prop.name}`},
    onclick: () => addSeries(path, prop.name, field),
  }));
  if (prop.writable) {
    const input = element("input", {className: "new-value", value: text(value), size: 10});
    const result = element("span", {className: "result"});
    actions.push(input, element("button", {className: "set", textContent: "set", onclick: async () => {
      try {
        const parsed = JSON.parse(input.value);
        await api("PUT", `/api/objects/${encodeURIComponent(path)}/properties/${encodeURIComponent(prop.name)}`, {value: parsed});
        result.textContent = "sent"; result.className = "result";
      } catch (error) { result.textContent = error.message; result.className = "result error"; }
    }}), result);
  }
  return actions;
}

function inputFor(arg) {
  const input = arg.type.input;
  if (input === "bool") { return element("input", {type: "checkbox", name: arg.name}); }
  if (input === "enum") { return element("select", {name: arg.name}, ...arg.type.values.map((v) => element("option", {value: v, textContent: v}))); }
  if (input === "integer" || input === "real") { return element("input", {type: "number", step: input === "real" ? "any" : "1", name: arg.name, required: true}); }
  return element("input", {name: arg.name, placeholder: input === "json" ? "JSON" : input});
}

function argValue(arg, field) {
  const input = arg.type.input;
  if (input === "bool") { return field.checked; }
  if (input === "integer" || input === "real") { return Number(field.value); }
  if (input === "json") { return JSON.parse(field.value); }
  return field.value;
}

function methodForm(path, method) {
  const fields = method.args.map((arg) => [arg, inputFor(arg)]);
  const result = element("span", {className: "result"});
  const form = element("form", {className: "method", dataset: {method: method.name}},
    element("strong", {textContent: method.name}), " (",
    ...fields.flatMap(([arg, field], i) => [i ? ", " : "", element("label", {title: arg.description}, `${arg.name}: ${arg.type.name} `, field)]),
    ")", method.returns ? ` → ${method.returns.name} ` : " ",
    element("button", {textContent: "call"}), result,
    element("div", {className: "doc", textContent: method.description}));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const args = fields.map(([arg, field]) => argValue(arg, field));
      const record = await api("POST", `/api/objects/${encodeURIComponent(path)}/methods/${encodeURIComponent(method.name)}`, {args});
      result.dataset.id = record.id;
      result.textContent = "…"; result.className = "result";
    } catch (error) { result.textContent = error.message; result.className = "result error"; }
  });
  return form;
}

function showResult(record) {
  const shown = document.querySelector(`.result[data-id="${CSS.escape(record.id)}"]`);
  if (!shown) { return; }
  shown.textContent = record.status === "done" ? `= ${text(record.result)}` : record.error;
  shown.className = record.status === "done" ? "result done" : "result error";
}

function classRows(selected) {
  return [...state.objects.values()]
    .filter((o) => o.summary.bus === selected.bus && o.summary.class === selected.cls)
    .map((o) => o.summary.path).sort().slice(0, TABLE_ROWS);
}

async function showClass(selected) {
  const type = await describe(selected.cls);
  const head = element("tr", {}, element("th", {textContent: "object"}), ...type.properties.map((p) => element("th", {textContent: p.name, title: p.description})));
  state.rows = new Map();
  const rows = classRows(selected).map((path) => {
    const row = element("tr", {dataset: {path}}, element("td", {textContent: state.objects.get(path).summary.name}),
      ...type.properties.map((p) => element("td", {className: "value", dataset: {prop: p.name}})));
    fillClassRow(row, state.objects.get(path));
    state.rows.set(path, row);
    return row;
  });
  $("view").replaceChildren(element("h2", {textContent: `${selected.cls} on ${selected.bus}`}),
    element("p", {className: "doc", textContent: type.description}), element("table", {id: "class-table"}, head, ...rows));
}

function fillClassRow(row, known) {
  if (!known) { return; }
  for (const cell of row.querySelectorAll("td[data-prop]")) { show(cell, text(known.values[cell.dataset.prop])); }
}

function show(cell, value) {
  // The cell's text node is changed in place, and only when the text differs: a changed cell is
  // laid out and painted again, an unchanged one costs nothing.
  const shown = cell.firstChild;
  if (shown && shown.nodeType === Node.TEXT_NODE) {
    if (shown.nodeValue !== value) { shown.nodeValue = value; }
  } else { cell.textContent = value; }
}

// -- events ------------------------------------------------------------------------------------

function logLine(line) {
  const list = $("events");
  list.prepend(element("li", {textContent: line}));
  while (list.children.length > 200) { list.lastChild.remove(); }
}

function logEvent(event) {
  const args = Object.entries(event.args).map(([k, v]) => `${k}=${text(v)}`).join(", ");
  logLine(`[${(event.time / 1e9).toFixed(3)}] ${event.path}.${event.event}(${args})`);
}

// -- plots -------------------------------------------------------------------------------------

function addSeries(path, prop, field) {
  const key = field ? `${path}.${prop}.${field}` : `${path}.${prop}`;
  if (!state.series.has(key)) {
    state.series.set(key, {path, prop, field, points: []});
    const known = state.objects.get(path);
    const value = known ? pick(known.values[prop], field) : undefined;
    if (typeof value === "number" && known.time) { state.series.get(key).points.push([known.time, value]); }
    renderLegend();
    watch();
  }
}

function renderLegend() {
  state.dirty = true;
  $("legend").replaceChildren(...[...state.series.keys()].map((key, i) => element("li", {
    style: `color: ${COLORS[i % COLORS.length]}`, textContent: `■ ${key}`, title: "click to remove",
    onclick: () => { state.series.delete(key); renderLegend(); watch(); },
  })));
}

function draw() {
  const canvas = $("plot");
  const context = canvas.getContext("2d");
  const width = canvas.width, height = canvas.height, left = 60, bottom = 20;
  context.fillStyle = "#fff";
  context.fillRect(0, 0, width, height);
  const span = Number($("window").value) * 1e9;
  // The newest point plotted: objects on another clock (wall or virtual) do not move the axis.
  let end = -Infinity;
  for (const series of state.series.values()) {
    if (series.points.length) { end = Math.max(end, series.points[series.points.length - 1][0]); }
  }
  const begin = end - span;
  let low = Infinity, high = -Infinity;
  for (const series of state.series.values()) {
    for (const [t, v] of series.points) { if (t >= begin) { low = Math.min(low, v); high = Math.max(high, v); } }
  }
  context.strokeStyle = "#999";
  context.strokeRect(left, 0, width - left - 1, height - bottom);
  if (low === Infinity) { return; }
  if (high === low) { high += 1; low -= 1; }
  const x = (t) => left + (t - begin) / span * (width - left);
  const y = (v) => (height - bottom) * (1 - (v - low) / (high - low));
  context.fillStyle = "#333";
  context.font = "11px sans-serif";
  context.fillText(high.toPrecision(4), 2, 10);
  context.fillText(low.toPrecision(4), 2, height - bottom);
  context.fillText(`${(begin / 1e9).toFixed(1)} s`, left, height - 4);
  context.fillText(`${(end / 1e9).toFixed(1)} s`, width - 50, height - 4);
  [...state.series.values()].forEach((series, i) => {
    context.strokeStyle = COLORS[i % COLORS.length];
    context.lineWidth = 1.5;
    context.beginPath();
    let started = false;
    for (const [t, v] of series.points) {
      if (t < begin) { continue; }
      if (started) { context.lineTo(x(t), y(v)); } else { context.moveTo(x(t), y(v)); started = true; }
    }
    context.stroke();
  });
}

function frame() {
  // Drawn when something changed only: an idle plot costs the page nothing.
  if (!state.paused && state.dirty) { state.dirty = false; draw(); }
  requestAnimationFrame(frame);
}

$("pause").addEventListener("change", (e) => { state.paused = e.target.checked; state.dirty = true; });
$("window").addEventListener("change", draw);
$("plot").addEventListener("wheel", (e) => {
  // Zoom: the time window, one step of the list per notch.
  e.preventDefault();
  const select = $("window");
  select.selectedIndex = Math.max(0, Math.min(select.options.length - 1, select.selectedIndex + Math.sign(e.deltaY)));
  draw();
});
$("clear").addEventListener("click", () => { for (const s of state.series.values()) { s.points = []; } draw(); });
$("png").addEventListener("click", () => download($("plot").toDataURL("image/png"), "plot.png"));
$("csv").addEventListener("click", () => {
  const lines = ["series,time_ns,value"];
  for (const [key, series] of state.series) { for (const [t, v] of series.points) { lines.push(`${key},${t},${v}`); } }
  download(URL.createObjectURL(new Blob([lines.join("\n") + "\n"], {type: "text/csv"})), "plot.csv");
});

function download(url, name) { element("a", {href: url, download: name}).click(); }

// -- the clock and the recorders -----------------------------------------------------------------

async function refreshClock() {
  try {
    const clock = await api("GET", "/api/clock");
    $("clock").hidden = !clock.master;
    if (clock.master) { $("clock-time").textContent = `${(clock.time / 1e9).toFixed(3)} s`; }
  } catch (error) { /* shown by the status line */ }
}

async function clockCall(path, body) {
  try {
    const clock = await api("POST", path, body);
    $("clock-time").textContent = `${(clock.time / 1e9).toFixed(3)} s`;
  } catch (error) { $("status").textContent = error.message; }
}

$("step").addEventListener("click", () => clockCall("/api/clock/step", {count: 1}));
$("steps").addEventListener("click", () => clockCall("/api/clock/step", {count: Number($("step-count").value)}));
$("advance").addEventListener("click", () => clockCall("/api/clock/advance", {duration: $("advance-by").value}));

async function refreshRecorders() {
  try {
    const recorders = await api("GET", "/api/recorders");
    $("recorders").replaceChildren(...recorders.map((r) => element("span", {}, `${r.name} `,
      ...["start", "stop"].map((action) => element("button", {className: `recorder-${action}`, textContent: action,
        onclick: () => api("POST", `/api/recorders/${encodeURIComponent(r.path)}/${action}`).catch((e) => { $("status").textContent = e.message; })})))));
  } catch (error) { /* no recorders */ }
}

async function start() {
  try { await api("GET", "/api/sessions"); } catch (error) { return; }
  connect();
  refreshClock();
  refreshRecorders();
  setInterval(() => { refreshBuses(); refreshClock(); refreshRecorders(); }, 2000);
  requestAnimationFrame(frame);
}

window.sengen = state;
start();
