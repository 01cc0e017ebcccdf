// The graph as SVG: nodes left to right in render order (a column per depth from the sources), links as curves,
// chains as a dashed frame around their active members. A node is a button: click, Enter or Space selects it.

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 120, NODE_H = 44, GAP_X = 50, GAP_Y = 16, PAD = 12;

function svg(name, attributes = {}, parent = null) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (parent) parent.appendChild(element);
  return element;
}

/// Columns: a node's depth is one more than the deepest node feeding it (render order guarantees feeders first).
export function layout(graph) {
  const depth = new Map();
  for (const node of graph.nodes) {
    const feeders = graph.links.filter((l) => l.to === node.id).map((l) => depth.get(l.from) ?? 0);
    depth.set(node.id, feeders.length ? Math.max(...feeders) + 1 : 0);
  }
  const rows = new Map();
  const positions = new Map();
  for (const node of graph.nodes) {
    const column = depth.get(node.id);
    const row = rows.get(column) ?? 0;
    rows.set(column, row + 1);
    positions.set(node.id, { x: PAD + column * (NODE_W + GAP_X), y: PAD + 14 + row * (NODE_H + GAP_Y + 14) });
  }
  const width = PAD * 2 + (Math.max(0, ...depth.values()) + 1) * (NODE_W + GAP_X) - GAP_X;
  const height = PAD * 2 + 14 + Math.max(1, ...rows.values()) * (NODE_H + GAP_Y + 14) - GAP_Y;
  return { positions, width, height };
}

export class GraphView {
  constructor(element, list, onSelect) {
    this.element = element;
    this.list = list;
    this.onSelect = onSelect;
    this.selected = null;
  }

  draw(graph) {
    const { positions, width, height } = layout(graph);
    const view = this.element;
    view.replaceChildren();
    view.setAttribute("viewBox", `0 0 ${width} ${height}`);
    view.style.maxWidth = `${Math.max(width, 320)}px`;
    const defs = svg("defs", {}, view);
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 8, markerHeight: 8, orient: "auto" }, defs);
    svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "#7b8a9c" }, marker);
    for (const chain of graph.chains) {
      const members = graph.nodes.filter((n) => n.id.startsWith(chain.id + "/")).map((n) => positions.get(n.id));
      if (!members.length) continue;
      const x0 = Math.min(...members.map((p) => p.x)) - 6, y0 = Math.min(...members.map((p) => p.y)) - 18;
      const x1 = Math.max(...members.map((p) => p.x)) + NODE_W + 6, y1 = Math.max(...members.map((p) => p.y)) + NODE_H + 6;
      svg("rect", { class: "chain", x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 8 }, view);
      const label = svg("text", { x: x0 + 6, y: y0 + 12, class: "axis" }, view);
      label.textContent = `chain ${chain.id}: ${chain.chain}`;
    }
    for (const link of graph.links) {
      const a = positions.get(link.from), b = positions.get(link.to);
      if (!a || !b) continue;
      const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x - 2, y2 = b.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      svg("path", { class: "link", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        "data-from": link.from, "data-to": link.to }, view);
    }
    this.list.replaceChildren();
    for (const node of graph.nodes) {
      const p = positions.get(node.id);
      const group = svg("g", { class: "node", transform: `translate(${p.x},${p.y})`, tabindex: 0, role: "button",
        "data-id": node.id, "aria-label": `${node.id}, ${node.type}` }, view);
      svg("rect", { width: NODE_W, height: NODE_H }, group);
      const name = svg("text", { x: 8, y: 18 }, group);
      name.textContent = node.id.length > 15 ? node.id.slice(0, 14) + "…" : node.id;
      const type = svg("text", { x: 8, y: 34, class: "type" }, group);
      type.textContent = node.type.length > 18 ? node.type.slice(0, 17) + "…" : node.type;
      const title = svg("title", {}, group);
      title.textContent = `${node.id} (${node.type}): ${node.summary}`;
      group.addEventListener("click", () => this.select(node.id));
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); this.select(node.id); }
      });
      const item = document.createElement("li");
      item.textContent = `${node.id} (${node.type})`;
      item.dataset.id = node.id;
      this.list.appendChild(item);
    }
    this.showState(graph);
    if (this.selected && !positions.has(this.selected)) this.selected = null;
    this.mark();
  }

  showState(graph) {
    for (const node of graph.nodes) {
      const group = this.element.querySelector(`.node[data-id="${CSS.escape(node.id)}"]`);
      if (group) group.classList.toggle("bypassed", !!node.state.bypass);
    }
  }

  select(id) {
    this.selected = id;
    this.mark();
    this.onSelect(id);
  }

  mark() {
    for (const group of this.element.querySelectorAll(".node")) {
      group.classList.toggle("selected", group.dataset.id === this.selected);
      group.setAttribute("aria-pressed", group.dataset.id === this.selected ? "true" : "false");
    }
  }
}
