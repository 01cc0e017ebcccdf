// The page: connects to graphhost, draws the graph, builds the selected node's controls from its descriptor, and
// shows transport, levels, loudness, spectrum, DSP load and the event log as their feeds arrive.

import { Connection } from "./connection.js";
import { GraphView } from "./graph-view.js";
import { NodeControls } from "./controls.js";
import { LevelsView, SpectrumView, showLoad } from "./meters.js";
import { Transport } from "./transport.js";
import { EventLog } from "./events.js";

const $ = (selector) => document.querySelector(selector);
const state = { graph: null, selected: null };

const connectionLine = $("#connection");
const connection = new Connection((status) => {
  connectionLine.dataset.state = status;
  connectionLine.textContent = status === "open" ? "connected" : "disconnected: reconnecting…";
  if (status === "open" && state.graph) log.add("reconnected to graphhost", "warning");
});
const log = new EventLog($("#events"));
const errorLine = $("#control-error");
const controls = new NodeControls($("#node-controls"), errorLine, connection);
const view = new GraphView($("#graph-view"), $("#node-list"), (id) => select(id));
const levels = new LevelsView($("#meters"), $("#loudness"));
const spectrum = new SpectrumView($("#spectrum-view"));
const transport = new Transport($("#transport"), connection, (message) => { errorLine.textContent = message; });
window.graphhost = { connection, state, controls };

function select(id) {
  state.selected = id;
  const node = state.graph.nodes.find((n) => n.id === id) ?? null;
  const chain = state.graph.chains.find((c) => id && (id === c.id || id.startsWith(c.id + "/"))) ?? null;
  $("#controls-hint").hidden = !!node;
  controls.show(node, chain);
}

connection.on("graph", (graph) => {
  state.graph = graph;
  $("#graph-name").textContent = graph.name.split("/").pop();
  $("#version").textContent = graph.version;
  document.body.dataset.version = graph.version;
  view.draw(graph);
  transport.setGraph(graph);
  const spectrumNode = $("#spectrum-node");
  const chosen = spectrumNode.value;
  spectrumNode.replaceChildren(...graph.nodes
    .filter((n) => n.ports.some((p) => p.direction === "output" && p.signal === "audio") || n.traits.includes("output"))
    .map((n) => new Option(n.id, n.id)));
  const outputs = graph.nodes.filter((n) => n.traits.includes("output"));
  spectrumNode.value = [...spectrumNode.options].some((o) => o.value === chosen) ? chosen : outputs[0]?.id ?? "";
  followSpectrum();
  if (state.selected) select(state.selected);
  document.body.dataset.ready = "true";
});

connection.on("values", (message) => {
  if (!state.graph) return;
  for (const node of state.graph.nodes) {
    const current = message.nodes[node.id];
    if (current) node.state = current;
  }
  view.showState(state.graph);
  const node = state.graph.nodes.find((n) => n.id === state.selected);
  if (node) controls.update(node);
  document.body.dataset.valuesAt = String(performance.timeOrigin + performance.now());
});

connection.on("response", (message) => controls.chart?.showResponse(message));
connection.on("event", (message) => log.add(message.event));
connection.on("transport", (message) => transport.show(message));
connection.on("feed", (message) => {
  if (message.feed === "meters") levels.showMeters(message.reading);
  else if (message.feed === "loudness") levels.showLoudness(message.reading);
  else if (message.feed === "spectrum") spectrum.show(message.reading);
  else if (message.feed === "load") showLoad($("#load-table"), message.reading);
});

// The spectrum and the loudness are measured only while someone watches: the page subscribes while their
// disclosures are open.
let spectrumNode = null;
function followSpectrum() {
  const node = $("#spectrum-details").open ? $("#spectrum-node").value : "";
  if (node === spectrumNode) return;
  if (spectrumNode) connection.unsubscribe({ feed: "spectrum", node: spectrumNode }).catch(() => {});
  spectrumNode = node || null;
  if (spectrumNode) connection.subscribe({ feed: "spectrum", node: spectrumNode }, 30).catch((e) => log.add(e.message, "error"));
}
$("#spectrum-node").addEventListener("change", followSpectrum);
$("#spectrum-details").addEventListener("toggle", followSpectrum);
$("#loudness-details").addEventListener("toggle", () => {
  if ($("#loudness-details").open) connection.subscribe({ feed: "loudness" }, 10).catch((e) => log.add(e.message, "error"));
  else connection.unsubscribe({ feed: "loudness" }).catch(() => {});
});

const rates = { meters: 30, load: 1, transport: 4 };
for (const [feed, rate] of Object.entries(rates)) {
  connection.subscribe({ feed }, rate).catch((e) => log.add(e.message, "error"));
}

async function listGraphs() {
  const response = await fetch("/graphs", { cache: "no-store" });
  const names = response.ok ? await response.json() : [];
  $("#load-file").replaceChildren(...names.map((n) => new Option(n, n)));
}
$("#load-button").addEventListener("click", () => {
  const path = $("#load-file").value;
  if (!path) return;
  connection.request("load", { path }).then(() => { errorLine.textContent = ""; }, (e) => { errorLine.textContent = e.message; });
});
listGraphs();
