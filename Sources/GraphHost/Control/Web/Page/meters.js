// Levels (peak, held peak, RMS over 300 ms and clips per channel, for every meter that is on), the outputs'
// loudness, a node's spectrum and the DSP load per node, from the feeds the page subscribes to.

const FLOOR = -60;

/// Where a level in dBFS sits on a bar, 0 to 100 %; silence (null) at the floor.
export function barPercent(dB) {
  if (dB === null || dB === undefined) return 0;
  return Math.max(0, Math.min(100, (100 * (dB - FLOOR)) / -FLOOR));
}

const dBText = (dB) => (dB === null || dB === undefined ? "-inf" : dB.toFixed(1));

export class LevelsView {
  constructor(meters, loudness) {
    this.meters = meters;
    this.loudness = loudness;
    this.rows = new Map();
  }

  showMeters(reading) {
    const seen = new Set();
    for (const meter of reading.meters) {
      seen.add(meter.node);
      let row = this.rows.get(meter.node);
      if (!row || row.bars.length !== meter.channels.length) {
        row?.element.remove();
        row = this.makeRow(meter);
        this.rows.set(meter.node, row);
      }
      meter.channels.forEach((level, c) => {
        const bar = row.bars[c];
        bar.rms.style.width = `${barPercent(level.rms)}%`;
        bar.peak.style.width = `${barPercent(level.peak)}%`;
        bar.held.style.left = `calc(${barPercent(level.heldPeak)}% - 2px)`;
        bar.element.classList.toggle("clipped", level.clips > 0);
        bar.element.dataset.peak = level.peak ?? "-inf";
      });
      const loudest = meter.channels.reduce((a, l) => Math.max(a, l.peak ?? -Infinity), -Infinity);
      const rms = meter.channels.reduce((a, l) => Math.max(a, l.rms ?? -Infinity), -Infinity);
      const clips = meter.channels.reduce((a, l) => a + l.clips, 0);
      row.numbers.textContent = `${dBText(Number.isFinite(loudest) ? loudest : null)} / ${dBText(Number.isFinite(rms) ? rms : null)} dB` + (clips ? ` · ${clips} clips` : "");
      row.element.dataset.peak = Number.isFinite(loudest) ? loudest : "-inf";
    }
    for (const [node, row] of this.rows) {
      if (!seen.has(node)) { row.element.remove(); this.rows.delete(node); }
    }
  }

  makeRow(meter) {
    const element = document.createElement("div");
    element.className = "meter";
    element.dataset.node = meter.node;
    element.setAttribute("role", "meter");
    element.setAttribute("aria-label", `${meter.node} level`);
    const name = document.createElement("span");
    name.textContent = meter.node;
    const bars = document.createElement("div");
    bars.className = "bars";
    const numbers = document.createElement("span");
    numbers.className = "numbers";
    numbers.title = "peak / RMS in dBFS";
    element.append(name, bars, numbers);
    this.meters.appendChild(element);
    return {
      element, numbers,
      bars: meter.channels.map(() => {
        const bar = document.createElement("div");
        bar.className = "bar";
        const peak = document.createElement("span"); peak.className = "peak";
        const rms = document.createElement("span"); rms.className = "rms";
        const held = document.createElement("span"); held.className = "held";
        bar.append(peak, rms, held);
        bars.appendChild(bar);
        return { element: bar, peak, rms, held };
      }),
    };
  }

  showLoudness(reading) {
    const root = this.loudness;
    root.replaceChildren();
    for (const output of reading.loudness) {
      const title = document.createElement("h3");
      title.textContent = `${output.node} loudness (LUFS)`;
      const list = document.createElement("dl");
      for (const [label, value, unit] of [["momentary", output.momentary, ""], ["short-term", output.shortTerm, ""],
        ["integrated", output.integrated, ""], ["range", output.range, " LU"], ["true peak", output.truePeak, " dBTP"]]) {
        const dt = document.createElement("dt"); dt.textContent = label;
        const dd = document.createElement("dd"); dd.textContent = dBText(value) + unit;
        list.append(dt, dd);
      }
      root.append(title, list);
    }
  }
}

export class SpectrumView {
  constructor(element) {
    this.element = element;
  }

  show(reading) {
    const bands = reading.spectrum.bands;
    const view = this.element;
    const width = 610 / Math.max(1, bands.length);
    while (view.childElementCount < bands.length) view.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "rect"));
    while (view.childElementCount > bands.length) view.lastChild.remove();
    bands.forEach((band, i) => {
      const height = (160 * Math.max(0, (band.level ?? -100) + 100)) / 100;
      const rect = view.children[i];
      rect.setAttribute("x", (i * width + 0.5).toFixed(1));
      rect.setAttribute("width", Math.max(1, width - 1).toFixed(1));
      rect.setAttribute("y", (160 - height).toFixed(1));
      rect.setAttribute("height", height.toFixed(1));
    });
    view.dataset.bands = bands.length;
  }
}

export function showLoad(table, reading) {
  const body = table.tBodies[0];
  body.replaceChildren();
  const load = reading.load;
  if (!load) return;
  const rows = [["callback", load.callback], ...load.nodes.map((n) => [n.node, n.figure])];
  for (const [name, figure] of rows) {
    const row = body.insertRow();
    row.dataset.node = name;
    for (const text of [name, figure.averageMicros.toFixed(2), figure.p99Micros.toFixed(1), figure.maxMicros.toFixed(1),
      `${(100 * figure.share).toFixed(2)} %`]) {
      row.insertCell().textContent = text;
    }
  }
  if (load.pipeWire) {
    const row = body.insertRow();
    for (const text of ["PipeWire's figure", load.pipeWire.averageMicros.toFixed(2), "", load.pipeWire.maxMicros.toFixed(1),
      `${(100 * load.pipeWire.share).toFixed(2)} %`]) row.insertCell().textContent = text;
  }
}
