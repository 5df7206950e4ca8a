// minikafka console: one page per URL fragment (#/topics, #/browse/t, ...),
// each drawn from the JSON API under /api/. Plain DOM, no framework; every
// text from the broker goes in with textContent, never as HTML.
"use strict";

const main = document.getElementById("main");
let timer = null; // the overview's polling, stopped when leaving the page

// api calls the JSON API and returns the decoded answer, or throws an
// Error with the server's message.
async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch("/api" + path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { /* empty or not JSON */ }
  if (!resp.ok) throw new Error((data && data.error) || resp.status + " " + resp.statusText);
  return data;
}

// el builds an element: el("td", {class: "num"}, "text", child, ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else if (v !== false && v != null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c == null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// table builds a table; a column whose first cell is a number gets a
// right-aligned header too.
function table(id, headers, rows) {
  const first = rows[0] ? rows[0].children : [];
  return el("table", { id },
    el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", { class: first[i] && first[i].classList.contains("num") ? "num" : null }, h)))),
    el("tbody", {}, rows));
}

function num(n) { return el("td", { class: "num" }, n == null || n < 0 ? "–" : Number(n).toLocaleString("en-US")); }

function bytes(n) {
  if (n == null || n < 0) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}

function toast(msg, isError) {
  const t = document.getElementById("toast");
  t.textContent = msg;
  t.className = isError ? "error" : "";
  t.hidden = false;
  clearTimeout(toast.t);
  toast.t = setTimeout(() => { t.hidden = true; }, 4000);
}

function time(ms) { return ms > 0 ? new Date(ms).toISOString().replace("T", " ").replace("Z", "") : "–"; }

function card(label, value, id) {
  return el("div", { class: "card" }, el("div", { class: "label" }, label), el("div", { class: "value", id }, value));
}

function show(...nodes) { main.replaceChildren(...nodes); }

// ---- charts ----------------------------------------------------------

// lineChart draws series [{label, color, points: [[t, v]...]}] on canvas;
// the scale reaches at least floor.
function lineChart(canvas, series, unit, floor) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 44;
  ctx.clearRect(0, 0, w, h);
  let tmin = Infinity, tmax = -Infinity, vmax = floor;
  for (const s of series) for (const [t, v] of s.points) {
    tmin = Math.min(tmin, t); tmax = Math.max(tmax, t); vmax = Math.max(vmax, v);
  }
  ctx.strokeStyle = "#e5e7eb"; ctx.fillStyle = "#6b7280"; ctx.font = "11px sans-serif";
  for (let i = 0; i <= 4; i++) {
    const y = h - pad / 2 - (h - pad) * i / 4;
    ctx.beginPath(); ctx.moveTo(pad, y); ctx.lineTo(w - 4, y); ctx.stroke();
    ctx.fillText(unit(vmax * i / 4), 2, y - 2);
  }
  if (!(tmax > tmin)) return;
  series.forEach((s, k) => {
    ctx.strokeStyle = s.color; ctx.lineWidth = 2; ctx.beginPath();
    s.points.forEach(([t, v], i) => {
      const x = pad + (w - pad - 4) * (t - tmin) / (tmax - tmin);
      const y = h - pad / 2 - (h - pad) * v / vmax;
      if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
    });
    ctx.stroke();
    ctx.fillStyle = s.color; ctx.fillText(s.label, pad + 8 + k * 140, 12);
  });
  ctx.lineWidth = 1;
}

// barChart draws labelled bars (lag per partition).
function barChart(canvas, bars) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 20;
  ctx.clearRect(0, 0, w, h);
  const vmax = Math.max(1, ...bars.map((b) => b.value));
  const bw = Math.max(4, Math.min(60, (w - pad) / Math.max(1, bars.length) - 6));
  ctx.font = "11px sans-serif";
  bars.forEach((b, i) => {
    const x = pad + i * (bw + 6), bh = (h - 2 * pad) * b.value / vmax;
    ctx.fillStyle = "#2563eb"; ctx.fillRect(x, h - pad - bh, bw, bh);
    ctx.fillStyle = "#1d2330"; ctx.fillText(String(b.value), x, h - pad - bh - 3);
    ctx.fillStyle = "#6b7280"; ctx.fillText(b.label, x, h - 5);
  });
}

// ---- overview --------------------------------------------------------

async function pageOverview() {
  const history = []; // [t, overview] samples, the last 60
  const rate = el("canvas", { id: "rates", width: 900, height: 220 });
  const reqs = el("canvas", { id: "reqrates", width: 900, height: 160 });
  const cards = el("div", { class: "cards", id: "cards" });
  const listeners = el("div", { id: "listeners" });
  show(el("h1", {}, "Overview"), cards, el("h2", {}, "Produce and fetch (bytes/s)"), rate,
    el("h2", {}, "Requests/s"), reqs, el("h2", {}, "Listeners"), listeners);
  async function tick() {
    let o;
    try { o = await api("GET", "/overview"); } catch (e) { cards.replaceChildren(el("p", { class: "error" }, e.message)); return; }
    history.push(o);
    if (history.length > 61) history.shift();
    cards.replaceChildren(
      card("Node", o.node_id, "node-id"), card("Cluster", o.cluster_id),
      card("Uptime", duration(o.uptime_s), "uptime"), card("Topics", o.topics, "topic-count"),
      card(o.data_dir ? "Data dir " + o.data_dir : "Data (in memory)", bytes(o.data_dir_bytes), "data-size"),
      card("Connections", o.connections, "conns"));
    listeners.replaceChildren(table("listener-table", ["Name", "Security", "Bound", "Advertised"],
      o.listeners.map((l) => el("tr", {}, el("td", {}, l.name), el("td", {}, l.security), el("td", {}, l.addr), el("td", {}, l.advertised)))));
    const rates = (field) => history.slice(1).map((cur, i) => {
      const prev = history[i], dt = (cur.now_ms - prev.now_ms) / 1000;
      return [cur.now_ms, dt > 0 ? Math.max(0, cur[field] - prev[field]) / dt : 0];
    });
    lineChart(rate, [
      { label: "produce", color: "#2563eb", points: rates("produce_bytes") },
      { label: "fetch", color: "#16a34a", points: rates("fetch_bytes") },
    ], (v) => bytes(Math.round(v)), 1024);
    lineChart(reqs, [
      { label: "produce requests", color: "#2563eb", points: rates("produce_requests") },
      { label: "fetch requests", color: "#16a34a", points: rates("fetch_requests") },
    ], (v) => v.toFixed(1), 1);
  }
  await tick();
  timer = setInterval(tick, 2000);
}

function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
  return (d ? d + "d " : "") + (d || h ? h + "h " : "") + m + "m " + (s % 60) + "s";
}

// ---- topics ----------------------------------------------------------

async function pageTopics() {
  const topics = await api("GET", "/topics");
  const name = el("input", { id: "new-topic", placeholder: "topic name", required: true });
  const parts = el("input", { id: "new-partitions", type: "number", min: 0, value: 1, class: "narrow" });
  const form = el("form", { class: "box bar", id: "create-topic", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", "/topics", { name: name.value, partitions: Number(parts.value) });
      toast("created " + name.value);
      pageTopics().catch(fail);
    } catch (e) { toast(e.message, true); }
  } }, "Create topic ", name, " partitions ", parts, el("button", { class: "primary", type: "submit" }, "Create"));
  show(el("h1", {}, "Topics"), form,
    table("topics", ["Topic", "Partitions", "Records", "Bytes", ""], topics.map((t) => el("tr", { "data-topic": t.name },
      el("td", {}, el("a", { href: "#/topics/" + encodeURIComponent(t.name) }, t.name), t.internal ? el("span", { class: "muted" }, " internal") : null),
      num(t.partitions), num(t.records), el("td", { class: "num" }, bytes(t.bytes)),
      el("td", {}, el("a", { href: "#/browse/" + encodeURIComponent(t.name) }, "browse"), " ", deleteButton(t.name, t.internal))))));
}

// deleteButton asks once more before deleting (no modal dialogs). An
// internal topic gets a disabled button that says why: the broker refuses
// to delete it (as Kafka does); if a delete is sent anyway, the broker's
// answer is what the toast shows.
function deleteButton(topic, internal) {
  const reason = "internal topic: the broker refuses to delete it";
  const b = el("button", { class: "danger", "data-delete": topic, disabled: !!internal, title: internal ? reason : null, onclick: async () => {
    if (b.dataset.armed !== "1") { b.dataset.armed = "1"; b.textContent = "Really delete?"; return; }
    try { await api("DELETE", "/topics/" + encodeURIComponent(topic)); toast("deleted " + topic); pageTopics().catch(fail); } catch (e) { toast(e.message, true); }
  } }, "Delete");
  return b;
}

async function pageTopic(topic) {
  const t = await api("GET", "/topics/" + encodeURIComponent(topic));
  const rows = t.configs.map((c) => {
    const input = el("input", { value: c.sensitive ? "" : c.value, "data-config": c.name, size: 30 });
    const save = el("button", { onclick: () => alterConfig(topic, { set: { [c.name]: input.value } }) }, "Save");
    const reset = c.default ? null : el("button", { onclick: () => alterConfig(topic, { delete: [c.name] }) }, "Reset");
    return el("tr", {}, el("td", {}, c.name), el("td", {}, input), el("td", { class: "muted" }, c.source), el("td", {}, save, " ", reset));
  });
  const newName = el("input", { id: "config-name", placeholder: "config name" });
  const newValue = el("input", { id: "config-value", placeholder: "value" });
  show(el("h1", {}, "Topic ", t.name),
    el("p", { class: "muted" }, "id " + t.id + " · " + t.partitions + " partitions · " + bytes(t.bytes)),
    el("h2", {}, "Partitions"),
    table("partitions", ["Partition", "Start offset", "End offset", "Records", "Bytes", ""], t.partition_list.map((p) => el("tr", {},
      num(p.partition), num(p.start_offset), num(p.end_offset), num(p.end_offset - p.start_offset), el("td", { class: "num" }, bytes(p.bytes)),
      el("td", {}, el("a", { href: "#/browse/" + encodeURIComponent(t.name) + "?partition=" + p.partition }, "browse"), p.error ? el("span", { class: "error" }, " " + p.error) : null)))),
    el("h2", {}, "Configs"),
    el("div", { class: "box bar" }, "Set ", newName, " = ", newValue,
      el("button", { class: "primary", onclick: () => alterConfig(topic, { set: { [newName.value]: newValue.value } }) }, "Set")),
    table("configs", ["Name", "Value", "Source", ""], rows));
}

async function alterConfig(topic, change) {
  try {
    await api("PATCH", "/topics/" + encodeURIComponent(topic) + "/configs", change);
    toast("saved");
    pageTopic(topic).catch(fail);
  } catch (e) { toast(e.message, true); }
}

// ---- message browser -------------------------------------------------

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// render shows bytes (base64 from the API, null for null) as text,
// pretty JSON or hex; "schema" shows what the registry decoded (dec),
// when the bytes are registry-framed, and pretty JSON otherwise.
function render(b64, format, dec) {
  if (b64 == null) return el("span", { class: "null" }, "null");
  if (format === "schema") {
    if (dec && dec.error) return el("div", {}, el("div", { class: "muted" }, "schema " + dec.schema_id), el("pre", { class: "error" }, dec.error));
    if (dec) return el("div", {}, el("a", { class: "muted schema-id", href: "#/schemas/" + dec.schema_id }, "schema " + dec.schema_id), el("pre", { class: "json" }, JSON.stringify(dec.json, null, 2)));
    format = "json";
  }
  const b = b64bytes(b64);
  if (format === "hex") {
    const parts = [];
    for (let i = 0; i < b.length; i++) parts.push(b[i].toString(16).padStart(2, "0"));
    return el("pre", { class: "hex" }, parts.join(" "));
  }
  const text = new TextDecoder("utf-8").decode(b);
  if (format === "json") {
    try { return el("pre", { class: "json" }, JSON.stringify(JSON.parse(text), null, 2)); } catch (e) { /* not JSON: as text */ }
  }
  return el("pre", {}, text);
}

async function pageBrowse(topic, params) {
  const topics = await api("GET", "/topics");
  if (!topic) topic = topics.length ? topics.filter((t) => !t.internal).concat(topics)[0].name : "";
  if (!topic) { show(el("h1", {}, "Messages"), el("p", {}, "No topics yet.")); return; }
  const info = await api("GET", "/topics/" + encodeURIComponent(topic));
  const state = { hist: [], page: null };

  const topicSel = el("select", { id: "topic", onchange: () => { location.hash = "#/browse/" + encodeURIComponent(topicSel.value); } },
    topics.map((t) => el("option", { value: t.name, selected: t.name === topic }, t.name)));
  // All partitions (newest first) unless the address names one.
  const partSel = el("select", { id: "partition", onchange: () => { if (all()) startSel.value = "latest"; } },
    el("option", { value: "all" }, "all partitions"),
    info.partition_list.map((p) => el("option", { value: p.partition, selected: String(p.partition) === params.get("partition") }, "partition " + p.partition)));
  const all = () => partSel.value === "all";
  const startSel = el("select", { id: "start" }, ["start", "offset", "timestamp", "latest"].map((s) => el("option", { value: s, selected: s === "latest" && all() }, s)));
  const startVal = el("input", { id: "start-value", placeholder: "offset or time (ms or 2026-01-02T15:04:05Z)", size: 30 });
  const filter = el("input", { id: "filter", placeholder: "filter: substring of key or value", size: 28 });
  const format = el("select", { id: "format", onchange: () => draw() }, ["text", "json", "hex", "schema"].map((f) => el("option", { value: f }, f)));
  const go = el("button", { id: "go", class: "primary", onclick: () => { state.hist = []; load(firstQuery()); } }, "Go");
  const prev = el("button", { id: "prev", onclick: () => back() }, "◀ Previous");
  const next = el("button", { id: "next", onclick: () => forward() }, "Next ▶");
  const status = el("div", { id: "page-info", class: "muted" });
  const out = el("div", { id: "records" });

  function firstQuery() {
    const q = new URLSearchParams({ partition: partSel.value });
    const v = startVal.value.trim();
    // Across partitions a page reads down from the latest records, or from
    // a time; offsets mean nothing there.
    if (all() && (startSel.value === "start" || startSel.value === "offset")) startSel.value = "latest";
    if (startSel.value === "offset") q.set("offset", v || "0");
    else if (startSel.value === "timestamp") q.set("timestamp", /^\d+$/.test(v) ? v : String(Date.parse(v)));
    else q.set("from", startSel.value);
    if (filter.value) q.set("filter", filter.value);
    return q;
  }
  function at(offset) {
    const q = all() ? new URLSearchParams({ partition: "all", before: offset }) : new URLSearchParams({ partition: partSel.value, offset: String(offset) });
    if (filter.value) q.set("filter", filter.value);
    return q;
  }
  async function load(q) {
    try {
      state.page = await api("GET", "/topics/" + encodeURIComponent(topic) + "/records?" + q.toString());
      draw();
    } catch (e) { status.textContent = ""; out.replaceChildren(el("p", { class: "error", id: "browse-error" }, e.message)); }
  }
  // Across partitions "next" is older records (the page runs newest
  // first) and the history holds cursors rather than offsets.
  function forward() {
    const p = state.page;
    if (!p) return;
    if (p.cursor !== undefined) {
      if (!p.next) return;
      state.hist.push(p.cursor);
      load(at(p.next));
      return;
    }
    if (p.next >= p.end_offset) return;
    state.hist.push(p.from);
    load(at(p.next));
  }
  function back() {
    const p = state.page;
    if (!p) return;
    if (state.hist.length) load(at(state.hist.pop()));
    else if (p.cursor === undefined && p.from > p.start_offset) load(at(p.prev));
  }
  function draw() {
    const p = state.page;
    if (!p) return;
    if (p.cursor !== undefined) { drawAll(p); return; }
    const n = p.records.length;
    const range = n ? "offsets " + p.records[0].offset + "–" + p.records[n - 1].offset : "no records";
    status.replaceChildren(el("span", { id: "count" }, n + " records"), " · " + range +
      " · partition " + p.partition + " holds offsets " + p.start_offset + "–" + (p.end_offset - 1) +
      (p.partial ? " · stopped after scanning " + p.scanned + " records (filter)" : ""));
    prev.disabled = !state.hist.length && p.from <= p.start_offset;
    next.disabled = p.next >= p.end_offset;
    const f = format.value;
    out.replaceChildren(table("record-table", ["Offset", "Timestamp", "Key", "Value", "Headers"], p.records.map((r) => el("tr", { "data-offset": r.offset }, num(r.offset), cells(r, f)))));
  }

  function cells(r, f) {
    return [el("td", {}, time(r.timestamp)), el("td", { class: "key" }, render(r.key, f, r.key_decoded)),
      el("td", { class: "value" }, render(r.value, f, r.value_decoded), r.truncated ? el("div", { class: "muted" }, "cut; " + r.value_len + " bytes") : null),
      el("td", { class: "headers" }, r.headers.map((h) => el("div", {}, h.key + ": ", render(h.value, f))))];
  }
  function drawAll(p) {
    const n = p.records.length;
    status.replaceChildren(el("span", { id: "count" }, n + " records"), " · newest first across " + p.partitions.length + " partitions" +
      (p.partial ? " · stopped after scanning " + p.scanned + " records (filter)" : ""));
    prev.disabled = !state.hist.length;
    next.disabled = !p.next;
    const f = format.value;
    out.replaceChildren(table("record-table", ["Partition", "Offset", "Timestamp", "Key", "Value", "Headers"], p.records.map((r) =>
      el("tr", { "data-partition": r.partition, "data-offset": r.offset }, num(r.partition), num(r.offset), cells(r, f)))));
  }

  // Produce form.
  const pPart = el("select", { id: "produce-partition" }, el("option", { value: "-1" }, "by key"), info.partition_list.map((p) => el("option", { value: p.partition }, String(p.partition))));
  const pKey = el("input", { id: "produce-key", placeholder: "key (empty: null)" });
  const pValue = el("textarea", { id: "produce-value", rows: 2, cols: 40, placeholder: "value" });
  const pHeaders = el("input", { id: "produce-headers", placeholder: "headers: k=v, k2=v2", size: 24 });
  const produce = el("form", { class: "box bar", id: "produce", onsubmit: async (ev) => {
    ev.preventDefault();
    const headers = pHeaders.value.split(",").map((s) => s.trim()).filter(Boolean).map((kv) => {
      const i = kv.indexOf("=");
      return i < 0 ? { key: kv, value: "" } : { key: kv.slice(0, i), value: kv.slice(i + 1) };
    });
    try {
      const r = await api("POST", "/topics/" + encodeURIComponent(topic) + "/records",
        { partition: Number(pPart.value), key: pKey.value === "" ? null : pKey.value, value: pValue.value, headers });
      toast("produced to partition " + r.partition + " at offset " + r.offset);
      document.getElementById("produce-result").textContent = "partition " + r.partition + " offset " + r.offset;
    } catch (e) { toast(e.message, true); }
  } }, "Produce: partition ", pPart, pKey, pValue, pHeaders, el("button", { class: "primary", type: "submit" }, "Produce"), el("span", { id: "produce-result", class: "ok" }));

  show(el("h1", {}, "Messages"),
    el("div", { class: "bar" }, topicSel, partSel, "from", startSel, startVal, filter, go),
    el("div", { class: "bar" }, prev, next, "show as", format, status),
    out, el("h2", {}, "Produce a record"), produce);
  await load(firstQuery());
}

// ---- groups ----------------------------------------------------------

async function pageGroups() {
  const groups = await api("GET", "/groups");
  show(el("h1", {}, "Consumer groups"),
    groups.length ? table("groups", ["Group", "Type", "State", "Protocol type", "Members", "Total lag"], groups.map((g) => el("tr", { "data-group": g.group },
      el("td", {}, el("a", { href: "#/groups/" + encodeURIComponent(g.group) }, g.group)), el("td", {}, g.type), el("td", {}, g.state), el("td", {}, g.protocol_type),
      el("td", { class: "members num" }, String(g.member_count)), el("td", { class: "lag num" }, g.total_lag === undefined ? "–" : String(g.total_lag)))))
      : el("p", { id: "no-groups" }, "No groups."));
}

async function pageGroup(name) {
  const g = await api("GET", "/groups/" + encodeURIComponent(name));
  const chart = el("canvas", { id: "lag-chart", width: 900, height: 200 });
  const to = el("select", { id: "reset-to" }, ["start", "end", "timestamp"].map((s) => el("option", { value: s }, s)));
  const ts = el("input", { id: "reset-timestamp", placeholder: "time (ms or RFC 3339), for timestamp", size: 30 });
  const empty = g.members.length === 0 && (g.state === "Empty" || g.state === "Dead");
  const reset = el("button", { id: "reset", class: "primary", disabled: !empty, onclick: async () => {
    const body = { to: to.value };
    if (to.value === "timestamp") body.timestamp = /^\d+$/.test(ts.value) ? Number(ts.value) : Date.parse(ts.value);
    try { await api("POST", "/groups/" + encodeURIComponent(name) + "/reset", body); toast("offsets reset to " + to.value); pageGroup(name).catch(fail); } catch (e) { toast(e.message, true); }
  } }, "Reset offsets");
  show(el("h1", {}, "Group ", g.group),
    el("div", { class: "cards" }, card("Type", g.type, "group-type"), card("State", g.state, "group-state"),
      card("Members", g.members.length, "member-count"), card("Total lag", g.total_lag, "total-lag"), card("Assignor", g.protocol || "–")),
    el("h2", {}, "Members"),
    table("members", ["Member", "Client", "Host", "Assigned"], g.members.map((m) => el("tr", {},
      el("td", {}, m.member_id, m.instance_id ? " (" + m.instance_id + ")" : ""), el("td", {}, m.client_id), el("td", {}, m.host),
      el("td", {}, Object.entries(m.assigned).map(([t, ps]) => t + ": " + ps.join(",")).join(" "))))),
    el("h2", {}, "Lag"), chart,
    table("lag", ["Topic", "Partition", "Committed", "End offset", "Lag", "Member"], g.lag.map((l) => el("tr", { "data-partition": l.topic + "/" + l.partition },
      el("td", {}, l.topic), num(l.partition), num(l.committed), num(l.end), num(l.lag), el("td", {}, l.member || "–")))),
    el("h2", {}, "Reset offsets"),
    el("div", { class: "box bar" }, "to", to, ts, reset, empty ? null : el("span", { class: "muted" }, "only when the group is empty (stop its consumers first)")));
  barChart(chart, g.lag.map((l) => ({ label: l.topic + "/" + l.partition, value: l.lag })));
}

// ---- transactions, SCRAM, forwarding ----------------------------------

// ---- cluster -----------------------------------------------------------

// pageCluster is read only: brokers, listeners, controller and the broker
// configs with where each value comes from (flag, default, dynamic, ...).
async function pageCluster() {
  const c = await api("GET", "/cluster");
  const filter = el("input", { id: "config-filter", placeholder: "filter configs", size: 28, oninput: () => {
    for (const tr of document.querySelectorAll("#broker-configs tbody tr")) tr.hidden = !tr.dataset.config.includes(filter.value);
  } });
  show(el("h1", {}, "Cluster"),
    el("div", { class: "cards" }, card("Cluster ID", c.cluster_id, "cluster-id"), card("Controller", String(c.controller), "controller"),
      card("Brokers", String(c.brokers.length), "broker-count")),
    el("h2", {}, "Brokers"),
    table("brokers", ["Node", "Host", "Port", "Rack", "State", ""], c.brokers.map((b) => el("tr", { "data-node": b.node_id, "data-state": b.state },
      num(b.node_id), el("td", {}, b.host), el("td", { class: "num" }, String(b.port)), el("td", {}, b.rack || "–"),
      el("td", { class: b.state === "up" ? "state" : "state warn" }, b.state),
      el("td", { class: "muted" }, [b.node_id === c.controller ? "controller" : null, b.node_id === c.node_id ? "this console's broker" : null].filter(Boolean).join(", "))))),
    el("h2", {}, "Listeners"),
    table("cluster-listeners", ["Name", "Security", "Bound", "Advertised"],
      c.listeners.map((l) => el("tr", {}, el("td", {}, l.name), el("td", {}, l.security), el("td", {}, l.addr), el("td", {}, l.advertised)))),
    el("h2", {}, "Broker configs (node " + c.node_id + ")"),
    el("div", { class: "bar" }, filter),
    table("broker-configs", ["Name", "Value", "Source"], c.configs.map((x) => el("tr", { "data-config": x.name },
      el("td", {}, x.name), el("td", { class: "value" }, x.sensitive ? el("span", { class: "muted" }, "(sensitive)") : x.value),
      el("td", { class: x.default ? "source muted" : "source" }, x.source)))));
}

// ---- ACLs and quotas (read only) -------------------------------------

async function pageACLs() {
  const a = await api("GET", "/acls");
  if (!a.enabled) { show(el("h1", {}, "ACLs"), el("p", { id: "acls-off" }, "The broker runs without an authorizer: no ACLs are kept or checked.")); return; }
  show(el("h1", {}, "ACLs"),
    a.acls.length ? table("acls", ["Principal", "Host", "Resource type", "Resource", "Pattern", "Operation", "Permission"], a.acls.map((x) =>
      el("tr", { "data-principal": x.principal, "data-resource": x.resource_type + ":" + x.resource },
        el("td", {}, x.principal), el("td", {}, x.host), el("td", {}, x.resource_type), el("td", {}, x.resource), el("td", {}, x.pattern),
        el("td", {}, x.operation), el("td", { class: x.permission === "deny" ? "error" : "" }, x.permission))))
      : el("p", { id: "no-acls" }, "No ACLs."));
}

async function pageQuotas() {
  const qs = await api("GET", "/quotas");
  const entity = (q) => q.entity.map((e) => e.type + "=" + (e.default ? "<default>" : e.name)).join(", ");
  show(el("h1", {}, "Client quotas"),
    qs.length ? table("quotas", ["Entity", "Quotas"], qs.map((q) => el("tr", { "data-entity": entity(q) },
      el("td", {}, entity(q)), el("td", {}, Object.keys(q.values).sort().map((k) => el("div", {}, k + " = " + q.values[k]))))))
      : el("p", { id: "no-quotas" }, "No client quotas."));
}

async function pageTransactions() {
  const t = await api("GET", "/transactions");
  show(el("h1", {}, "Transactions"),
    t.transactions.length ? table("txns", ["Transactional ID", "State", "Producer ID", "Epoch", "Timeout ms", "Started", "Partitions"], t.transactions.map((x) => el("tr", { "data-txn": x.id },
      el("td", {}, x.id), el("td", {}, x.state), num(x.producer_id), num(x.producer_epoch), num(x.timeout_ms), el("td", {}, time(x.start_timestamp)),
      el("td", {}, Object.entries(x.partitions).map(([k, v]) => k + ": " + v.join(",")).join(" ")))))
      : el("p", { id: "no-txns" }, "No transactional IDs."),
    el("h2", {}, "Active producers"),
    t.producers.length ? table("producers", ["Topic", "Partition", "Producer ID", "Epoch", "Last sequence", "Last timestamp", "Txn start offset"], t.producers.map((p) => el("tr", {},
      el("td", {}, p.topic), num(p.partition), num(p.producer_id), num(p.producer_epoch), num(p.last_sequence), el("td", {}, time(p.last_timestamp)), num(p.current_txn_start_offset))))
      : el("p", { id: "no-producers" }, "No active producers."));
}

// pageScram lists the SCRAM users and creates, changes and deletes them
// (AlterUserScramCredentials, as kafka-configs and rpk security user do).
async function pageScram() {
  const users = await api("GET", "/scram");
  const name = el("input", { id: "scram-user", placeholder: "user name", required: true, autocomplete: "off" });
  const pass = el("input", { id: "scram-password", type: "password", placeholder: "password", required: true, autocomplete: "new-password" });
  const mech = el("select", { id: "scram-mechanism" }, ["SCRAM-SHA-256", "SCRAM-SHA-512"].map((m) => el("option", { value: m }, m)));
  const iters = el("input", { id: "scram-iterations", type: "number", min: 4096, max: 16384, value: 8192, class: "narrow" });
  const form = el("form", { class: "box bar", id: "scram-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const user = name.value;
    try {
      await api("PUT", "/scram/" + encodeURIComponent(user), { password: pass.value, mechanism: mech.value, iterations: Number(iters.value) });
      toast("saved " + mech.value + " credential of " + user);
      pageScram().catch(fail);
    } catch (e) { toast(e.message, true); }
  } }, "Create user or set password ", name, pass, mech, " iterations ", iters, el("button", { class: "primary", type: "submit" }, "Save"));
  // edit fills the form for an existing user's credential.
  const edit = (u, c) => {
    name.value = u.user; mech.value = c ? c.mechanism : "SCRAM-SHA-256"; if (c) iters.value = c.iterations;
    pass.value = ""; pass.focus();
  };
  const rows = users.map((u) => el("tr", { "data-user": u.user }, el("td", {}, u.user),
    el("td", { class: "creds" }, u.error ? el("span", { class: "error" }, u.error) : u.credentials.map((c) => el("div", { "data-mechanism": c.mechanism },
      c.mechanism + " (" + c.iterations + " iterations) ",
      el("button", { class: "set-password", onclick: () => edit(u, c) }, "Set password"),
      u.credentials.length > 1 ? [" ", scramDelete(u.user, c.mechanism, "Remove")] : null))),
    el("td", {}, scramDelete(u.user, null, "Delete user"))));
  show(el("h1", {}, "SCRAM users"), form,
    users.length ? table("scram", ["User", "Credentials", ""], rows) : el("p", { id: "no-users" }, "No SCRAM users."));
}

// scramDelete asks once more, then deletes one mechanism's credential or,
// without one, every credential of the user.
function scramDelete(user, mechanism, label) {
  const b = el("button", { class: "danger", "data-delete-user": mechanism ? null : user, "data-remove": mechanism ? user + " " + mechanism : null, onclick: async () => {
    if (b.dataset.armed !== "1") { b.dataset.armed = "1"; b.textContent = "Really " + label.toLowerCase() + "?"; return; }
    try {
      await api("DELETE", "/scram/" + encodeURIComponent(user) + (mechanism ? "?mechanism=" + encodeURIComponent(mechanism) : ""));
      toast(mechanism ? "removed " + mechanism + " from " + user : "deleted " + user);
      pageScram().catch(fail);
    } catch (e) { toast(e.message, true); }
  } }, label);
  return b;
}

async function pageForwarding() {
  const [stats, groups] = await Promise.all([api("GET", "/forwarding"), api("GET", "/forwarding/groups")]);
  // Consumer group offset sync (-forward-group-offsets, -forward-checkpoints): shown only when it ran.
  const groupTable = groups.length ? [el("h2", {}, "Consumer group offsets upstream"),
    table("forward-groups", ["Group", "Topic", "Partition", "Local offset", "Upstream offset", "Upstream committed", "Checkpoint", "Lag", "Synced", "Error"], groups.map((g) => el("tr", { "data-group": g.group },
      el("td", {}, g.group), el("td", {}, g.topic), num(g.partition), num(g.local_offset), num(g.upstream_offset), num(g.committed),
      num(g.checkpoint), num(g.upstream_offset >= 0 ? g.lag : null), el("td", {}, time(Date.parse(g.synced_at))), el("td", { class: "error" }, g.error || ""))))] : [];
  show(el("h1", {}, "Forwarding"),
    stats.length ? table("forwarding", ["Topic", "Partition", "Upstream topic", "State", "End offset", "Acked upstream", "Lag", "Spool", "Pressure", "Encryption", "Upstream producer", "Errors", "Last error"], stats.map((s) => el("tr", {},
      el("td", {}, s.topic), num(s.partition), el("td", {}, s.upstream_topic), el("td", {}, s.state), num(s.log_end_offset), num(s.upstream_acked), num(s.lag),
      el("td", { class: "num" }, bytes(s.spool_bytes) + " / " + bytes(s.spool_max_bytes)), el("td", { class: "num" }, (100 * s.pressure).toFixed(1) + " %"),
      el("td", {}, s.encryption ? s.encryption + " (key " + s.key_id + ")" : "off"),
      el("td", {}, s.producer_id >= 0 ? s.producer_id + "/" + s.producer_epoch + (s.producer_resets ? " (" + s.producer_resets + " resets)" : "") : "-"), num(s.errors),
      el("td", { class: "error" }, s.last_error || ""))))
      : el("p", { id: "no-forwarding" }, "No forwarded topics (start the broker with -upstream and -forward)."),
    // The uplink's transactional producer, once it shipped a committed transaction this run.
    ...(stats.length && stats[0].transactional_producer_id >= 0 ? [el("p", { id: "forward-txn" },
      "Committed transactions ship as upstream transactional ID " + stats[0].transactional_id + " (producer " + stats[0].transactional_producer_id + "): " +
      stats[0].transaction_rounds + " upstream transactions since start.")] : []),
    ...groupTable);
}

// ---- schemas ---------------------------------------------------------

// pageSchemas lists the registry's subjects and versions; with an ID it
// also shows that schema.
async function pageSchemas(id) {
  const page = await api("GET", "/schemas");
  if (!page.enabled) {
    show(el("h1", {}, "Schemas"), el("p", { id: "no-registry" }, "The schema registry is off (start the broker with -schema-registry-addr)."));
    return;
  }
  const shown = [];
  if (id) {
    const s = await api("GET", "/schemas/ids/" + encodeURIComponent(id));
    let text = s.schema;
    if (s.type !== "PROTOBUF") { try { text = JSON.stringify(JSON.parse(s.schema), null, 2); } catch (e) { /* as registered */ } }
    shown.push(el("h2", {}, "Schema " + s.id + " (" + s.type + ")"),
      s.references && s.references.length ? el("p", {}, "References: " + s.references.map((r) => r.name + " → " + r.subject + " v" + r.version).join(", ")) : null,
      el("pre", { id: "schema-text", class: "json" }, text));
  }
  show(el("h1", {}, "Schemas"),
    page.subjects.length ? table("subjects", ["Subject", "Compatibility", "Versions (ID, type)"], page.subjects.map((s) => el("tr", { "data-subject": s.subject },
      el("td", {}, s.subject), el("td", {}, s.compatibility),
      el("td", {}, s.versions.map((v) => el("span", { class: v.deleted ? "muted" : "" },
        el("a", { href: "#/schemas/" + v.id }, "v" + v.version), " (" + v.id + ", " + v.type + (v.deleted ? ", deleted" : "") + ") "))))))
      : el("p", { id: "no-subjects" }, "No subjects yet."),
    ...shown);
}

// ---- routing ---------------------------------------------------------

function fail(e) { show(el("h1", {}, "Error"), el("p", { class: "error", id: "page-error" }, e.message)); }

async function route() {
  clearInterval(timer);
  timer = null;
  const [path, query] = (location.hash.slice(1) || "/overview").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const page = parts[0] || "overview";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === page);
  const pages = {
    overview: () => pageOverview(),
    topics: () => (parts[1] ? pageTopic(parts[1]) : pageTopics()),
    browse: () => pageBrowse(parts[1], params),
    cluster: () => pageCluster(),
    acls: () => pageACLs(),
    quotas: () => pageQuotas(),
    groups: () => (parts[1] ? pageGroup(parts[1]) : pageGroups()),
    transactions: () => pageTransactions(),
    scram: () => pageScram(),
    forwarding: () => pageForwarding(),
    schemas: () => pageSchemas(parts[1]),
  };
  main.dataset.ready = "";
  try {
    await (pages[page] || (() => { throw new Error("no page " + page); }))();
  } catch (e) { fail(e); }
  main.dataset.ready = page; // tests wait for this
}

window.addEventListener("hashchange", route);
route();
