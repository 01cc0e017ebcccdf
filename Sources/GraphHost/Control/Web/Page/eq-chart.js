// An EQ's bands drawn over the response graphhost computes for it (the `response` request): a handle per band,
// dragged (or moved with the arrow keys) to set its gain, and for a parametric band its frequency too. The curve is
// asked for again after each change, so it shows what the node plays.

const SVG = "http://www.w3.org/2000/svg";
const W = 600, H = 220, LEFT = 34, RIGHT = 8, TOP = 8, BOTTOM = 20;
const F_LOW = 20, F_HIGH = 20000;

function svg(name, attributes = {}, parent = null) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (parent) parent.appendChild(element);
  return element;
}

const x = (f) => LEFT + ((W - LEFT - RIGHT) * Math.log(f / F_LOW)) / Math.log(F_HIGH / F_LOW);
const frequencyAt = (px) => F_LOW * Math.pow(F_HIGH / F_LOW, (px - LEFT) / (W - LEFT - RIGHT));

/// The bands a node's descriptor shows: `band.N` gains at the frequency their label names (the iPod EQ), or
/// `band.N.frequency` with `band.N.gain` (a parametric EQ).
export function bandsOf(node) {
  const bands = [];
  for (const p of node.parameters) {
    let m = /^band\.(\d+)$/.exec(p.id);
    if (m && p.unit === "dB") {
      const frequency = parseFloat(p.label);
      if (Number.isFinite(frequency)) bands.push({ index: Number(m[1]), gain: p, frequency });
      continue;
    }
    m = /^band\.(\d+)\.frequency$/.exec(p.id);
    if (m) {
      const gain = node.parameters.find((q) => q.id === `band.${m[1]}.gain`);
      if (gain) bands.push({ index: Number(m[1]), gain, frequencyParameter: p });
    }
  }
  return bands;
}

export class EQChart {
  constructor(node, set, connection) {
    this.node = node;
    this.set = set;
    this.connection = connection;
    this.bands = bandsOf(node);
    const limit = Math.max(12, ...this.bands.map((b) => Math.max(Math.abs(b.gain.minimum), Math.abs(b.gain.maximum))));
    this.range = limit;
    this.element = svg("svg", { class: "eq-chart", viewBox: `0 0 ${W} ${H}`, role: "group",
      "aria-label": `${node.id}: its bands over its response` });
    this.drawGrid();
    this.curve = svg("polyline", { class: "response", points: "" }, this.element);
    this.handles = this.bands.map((band) => this.makeHandle(band));
    this.asked = false;
    this.again = false;
    this.update(node);
  }

  y(dB) { return TOP + ((H - TOP - BOTTOM) * (this.range - dB)) / (2 * this.range); }
  dBAt(py) { return this.range - ((py - TOP) * 2 * this.range) / (H - TOP - BOTTOM); }

  drawGrid() {
    for (const f of [31.25, 62.5, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]) {
      svg("line", { class: "grid", x1: x(f), x2: x(f), y1: TOP, y2: H - BOTTOM }, this.element);
      const label = svg("text", { class: "axis", x: x(f), y: H - 6, "text-anchor": "middle" }, this.element);
      label.textContent = f >= 1000 ? `${f / 1000}k` : `${Math.round(f)}`;
    }
    const step = this.range > 12 ? 12 : 6;
    for (let dB = -this.range; dB <= this.range; dB += step) {
      svg("line", { class: dB === 0 ? "grid zero" : "grid", x1: LEFT, x2: W - RIGHT, y1: this.y(dB), y2: this.y(dB) }, this.element);
      const label = svg("text", { class: "axis", x: LEFT - 4, y: this.y(dB) + 3, "text-anchor": "end" }, this.element);
      label.textContent = `${dB > 0 ? "+" : ""}${dB}`;
    }
  }

  frequency(band) {
    return band.frequencyParameter ? this.node.state.values[band.frequencyParameter.id] : band.frequency;
  }

  makeHandle(band) {
    const handle = svg("circle", { class: "handle", r: 7, tabindex: 0, role: "slider",
      "aria-label": band.gain.label, "aria-valuemin": band.gain.minimum, "aria-valuemax": band.gain.maximum,
      "data-parameter": band.gain.id }, this.element);
    handle.addEventListener("pointerdown", (event) => {
      handle.setPointerCapture(event.pointerId);
      this.dragging = band;
    });
    handle.addEventListener("pointermove", (event) => {
      if (this.dragging !== band) return;
      const point = this.toChart(event);
      this.move(band, Math.min(band.gain.maximum, Math.max(band.gain.minimum, this.dBAt(point.y))),
        band.frequencyParameter ? frequencyAt(point.x) : null);
    });
    handle.addEventListener("pointerup", () => { this.dragging = null; });
    handle.addEventListener("keydown", (event) => {
      const gain = this.node.state.values[band.gain.id] ?? 0;
      const f = this.frequency(band);
      const moves = { ArrowUp: [0.5, 1], ArrowDown: [-0.5, 1], ArrowRight: [0, Math.pow(2, 1 / 12)], ArrowLeft: [0, Math.pow(2, -1 / 12)] };
      const move = moves[event.key];
      if (!move) return;
      event.preventDefault();
      const newGain = Math.min(band.gain.maximum, Math.max(band.gain.minimum, gain + move[0]));
      this.move(band, newGain, band.frequencyParameter && move[1] !== 1 ? f * move[1] : null);
    });
    return handle;
  }

  toChart(event) {
    const box = this.element.getBoundingClientRect();
    return { x: ((event.clientX - box.left) * W) / box.width, y: ((event.clientY - box.top) * H) / box.height };
  }

  move(band, gain, frequency) {
    this.node.state.values[band.gain.id] = gain;
    let requests = [this.set(band.gain.id, Math.round(gain * 10) / 10)];
    if (frequency !== null) {
      const p = band.frequencyParameter;
      const f = Math.min(p.maximum, Math.max(p.minimum, frequency));
      this.node.state.values[p.id] = f;
      requests.push(this.set(p.id, Math.round(f)));
    }
    this.place();
    Promise.all(requests).then(() => this.refresh());
  }

  place() {
    this.bands.forEach((band, i) => {
      const gain = this.node.state.values[band.gain.id] ?? 0;
      const handle = this.handles[i];
      handle.setAttribute("cx", x(this.frequency(band)));
      handle.setAttribute("cy", this.y(gain));
      handle.setAttribute("aria-valuenow", gain);
      handle.setAttribute("aria-valuetext", `${gain.toFixed(1)} dB at ${Math.round(this.frequency(band))} Hz`);
    });
  }

  update(node) {
    this.node = node;
    this.place();
    this.refresh();
  }

  /// Asks for the response again (one request at a time; a change meanwhile asks once more after it), while the
  /// chart is on the page.
  refresh() {
    if (!this.element.isConnected) return;
    if (this.asked) { this.again = true; return; }
    this.asked = true;
    this.connection.request("response", { node: this.node.id }).finally(() => {
      this.asked = false;
      if (this.again) { this.again = false; this.refresh(); }
    }).catch(() => {});
  }

  showResponse(message) {
    if (message.node !== this.node.id) return;
    const clip = (dB) => Math.max(-this.range - 1, Math.min(this.range + 1, dB));
    this.curve.setAttribute("points", message.points.filter(([f]) => f >= F_LOW && f <= F_HIGH)
      .map(([f, dB]) => `${x(f).toFixed(1)},${this.y(clip(dB)).toFixed(1)}`).join(" "));
    this.curve.dataset.points = message.points.length;
  }
}
