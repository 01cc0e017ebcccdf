// A node's controls, generated from its descriptor: a slider per number (with its unit, on its curve), a picker
// per enumeration, a checkbox per toggle, a text field per text parameter, the preset picker, bypass and the meter
// switch, a chain's picker, and an EQ's response chart. Every change is a request; a refused one shows graphhost's
// error and puts the control back to the value the node plays.

import { EQChart } from "./eq-chart.js";

const STEPS = 1000;

export function format(value, unit = "") {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  const abs = Math.abs(value);
  const text = abs >= 1000 ? value.toFixed(0) : abs >= 100 ? value.toFixed(1) : value.toFixed(2);
  return unit ? `${text} ${unit}` : text;
}

/// Where a value sits on a slider of STEPS steps, and back: log parameters are spread by octaves.
export function toPosition(p, value) {
  if (p.curve === "log" && p.minimum > 0) {
    return Math.round((STEPS * Math.log(value / p.minimum)) / Math.log(p.maximum / p.minimum));
  }
  return Math.round((STEPS * (value - p.minimum)) / (p.maximum - p.minimum));
}

export function fromPosition(p, position) {
  let value = p.curve === "log" && p.minimum > 0
    ? p.minimum * Math.pow(p.maximum / p.minimum, position / STEPS)
    : p.minimum + ((p.maximum - p.minimum) * position) / STEPS;
  if (p.type === "int") value = Math.round(value);
  return value;
}

export class NodeControls {
  constructor(element, errorLine, connection) {
    this.element = element;
    this.errorLine = errorLine;
    this.connection = connection;
    this.node = null;
    this.chain = null;
    this.inputs = new Map();
    this.chart = null;
  }

  show(node, chain) {
    this.node = node;
    this.chain = chain;
    this.inputs.clear();
    this.chart = null;
    this.errorLine.textContent = "";
    const root = this.element;
    root.replaceChildren();
    if (!node) return;
    const heading = document.createElement("h3");
    heading.textContent = `${node.id} (${node.type})`;
    root.appendChild(heading);
    const summary = document.createElement("p");
    summary.textContent = node.summary;
    summary.className = "summary";
    root.appendChild(summary);
    if (chain) this.addChainPicker(chain);
    if (node.presets.length) this.addPresetPicker(node);
    if (node.traits.includes("bypass")) this.addToggle("bypass", "Bypass", () => node.state.bypass, (on) => this.act("bypass", { on }));
    if (!node.traits.includes("output") && node.ports.some((p) => p.direction === "output" && p.signal === "audio")) {
      this.addToggle("meter", "Meter", () => node.state.meter, (on) => this.act("meter", { on }));
    }
    if (node.response) {
      this.chart = new EQChart(node, (parameter, value) => this.set(parameter, value), this.connection);
      root.appendChild(this.chart.element);
    }
    for (const p of node.parameters) this.addParameter(p);
    this.chart?.refresh();
  }

  /// The node's values changed (here or on any other surface).
  update(node) {
    if (!this.node || node.id !== this.node.id) return;
    this.node = node;
    for (const [key, input] of this.inputs) {
      if (document.activeElement === input && input.dataset.dragging === "true") continue;
      this.showValue(key, input);
    }
    this.chart?.update(node);
  }

  showValue(key, input) {
    const node = this.node;
    if (key === "preset") { input.value = node.state.preset ?? ""; return; }
    if (key === "bypass") { input.checked = !!node.state.bypass; return; }
    if (key === "meter") { input.checked = !!node.state.meter; return; }
    if (key === "chain") { input.value = this.chain.chain; return; }
    const p = node.parameters.find((q) => q.id === key);
    const value = node.state.values[key];
    if (value === undefined) return;
    if (p.type === "bool") input.checked = value >= 0.5;
    else if (p.type === "enumeration") input.value = String(value);
    else if (p.type !== "text") {
      input.value = toPosition(p, value);
      input.nextElementSibling.value = format(value, p.unit);
      input.setAttribute("aria-valuetext", format(value, p.unit));
    }
  }

  row(key, labelText, input, output = null) {
    const row = document.createElement("div");
    row.className = "control";
    const label = document.createElement("label");
    const id = `control-${this.node.id}-${key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    input.id = id;
    label.htmlFor = id;
    label.textContent = labelText;
    row.append(label, input);
    if (output) row.append(output);
    this.element.appendChild(row);
    this.inputs.set(key, input);
    this.showValue(key, input);
  }

  addParameter(p) {
    let input;
    if (p.type === "bool") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.addEventListener("change", () => this.set(p.id, input.checked ? 1 : 0));
      this.row(p.id, p.label, input);
    } else if (p.type === "enumeration") {
      input = document.createElement("select");
      for (const { label, value } of p.labels) input.add(new Option(label, String(value)));
      input.addEventListener("change", () => this.set(p.id, Number(input.value)));
      this.row(p.id, p.label, input);
    } else if (p.type === "text") {
      input = document.createElement("input");
      input.type = "text";
      input.addEventListener("change", () => this.set(p.id, input.value));
      this.row(p.id, p.label, input);
    } else if (p.minimum !== undefined && p.maximum !== undefined) {
      input = document.createElement("input");
      input.type = "range";
      input.min = 0;
      input.max = STEPS;
      input.step = p.type === "int" ? Math.max(1, Math.round(STEPS / (p.maximum - p.minimum))) : 1;
      const output = document.createElement("output");
      output.htmlFor = input.id;
      input.addEventListener("pointerdown", () => { input.dataset.dragging = "true"; });
      input.addEventListener("pointerup", () => { input.dataset.dragging = "false"; });
      input.addEventListener("input", () => {
        const value = fromPosition(p, Number(input.value));
        output.value = format(value, p.unit);
        this.set(p.id, value);
      });
      this.row(p.id, `${p.label}${p.unit ? ` (${p.unit})` : ""}`, input, output);
    }
  }

  addPresetPicker(node) {
    const input = document.createElement("select");
    input.add(new Option("(none)", ""));
    for (const name of node.presets) input.add(new Option(name, name));
    input.addEventListener("change", () => { if (input.value) this.act("preset", { name: input.value }); });
    this.row("preset", "Preset", input);
  }

  addChainPicker(chain) {
    const input = document.createElement("select");
    for (const name of chain.chains) input.add(new Option(name, name));
    input.addEventListener("change", () => this.act("chain", { node: chain.id, name: input.value }));
    this.row("chain", "Chain", input);
  }

  addToggle(key, label, get, change) {
    const input = document.createElement("input");
    input.type = "checkbox";
    input.addEventListener("change", () => change(input.checked));
    this.row(key, label, input);
  }

  set(parameter, value) { return this.act("set", { parameter, value }); }

  act(op, fields) {
    const node = this.node;
    return this.connection.request(op, { node: node.id, ...fields }).then(
      () => { this.errorLine.textContent = ""; },
      (error) => {
        this.errorLine.textContent = error.message;
        for (const [key, input] of this.inputs) this.showValue(key, input);
        this.chart?.update(this.node);
      });
  }
}
