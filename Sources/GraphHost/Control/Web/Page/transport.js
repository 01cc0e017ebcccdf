// Play and pause, and per stream: its position (a seek slider when the stream can seek), title and artist, and how
// full its buffer is, from the `status` feed. The streams' rows are laid out with the graph and only filled by the
// feed, so what follows them (the graph) stays where it was first drawn: a click aimed at it lands on it.

const clock = (seconds) => {
  if (!Number.isFinite(seconds)) return "–";
  const m = Math.floor(seconds / 60), s = Math.floor(seconds % 60);
  return `${m}:${String(s).padStart(2, "0")}`;
};

export class Transport {
  constructor(root, connection, showError) {
    this.button = root.querySelector("#play");
    this.nowPlaying = root.querySelector("#now-playing");
    this.streams = root.querySelector("#streams");
    this.connection = connection;
    this.showError = showError;
    this.playing = true;
    this.seekable = new Set();
    this.rows = new Map();
    this.button.addEventListener("click", () => {
      this.connection.request(this.playing ? "pause" : "play").catch((e) => this.showError(e.message));
    });
  }

  setGraph(graph) {
    this.seekable = new Set(graph.nodes.filter((n) => n.traits.includes("seek")).map((n) => n.id));
    this.streams.replaceChildren();
    this.rows.clear();
    for (const node of graph.nodes.filter((n) => n.type === "stream")) this.rows.set(node.id, this.makeRow(node.id));
  }

  show(status) {
    this.playing = status.playing;
    this.button.textContent = status.playing ? "Pause" : "Play";
    this.button.setAttribute("aria-pressed", status.playing ? "false" : "true");
    const titled = status.streams.find((s) => s.title);
    this.nowPlaying.textContent = titled ? `${titled.title}${titled.artist ? " — " + titled.artist : ""}` : "";
    for (const stream of status.streams) {
      let row = this.rows.get(stream.id);
      if (!row) { row = this.makeRow(stream.id); this.rows.set(stream.id, row); }
      row.time.textContent = `${clock(stream.position)} / ${clock(stream.duration ?? NaN)}`;
      if (row.seek) {
        // Shown for a stream of known duration; its place is kept either way.
        row.seek.disabled = !stream.duration;
        row.seek.style.visibility = stream.duration ? "" : "hidden";
      }
      if (row.seek && stream.duration && document.activeElement !== row.seek) {
        row.seek.max = Math.max(1, Math.floor(stream.duration ?? 0));
        row.seek.value = Math.floor(stream.position);
      }
      row.fill.style.width = `${Math.round(100 * stream.bufferFill)}%`;
      row.fillBox.title = `buffer ${Math.round(100 * stream.bufferFill)} %`;
      row.state.textContent = stream.state + (stream.error ? `: ${stream.error}` : "");
    }
  }

  makeRow(id) {
    const element = document.createElement("div");
    element.className = "stream";
    element.dataset.node = id;
    const head = document.createElement("div");
    head.className = "row";
    const name = document.createElement("strong");
    name.textContent = id;
    const time = document.createElement("span");
    const state = document.createElement("span");
    const fillBox = document.createElement("span");
    fillBox.className = "fill";
    fillBox.setAttribute("role", "img");
    const fill = document.createElement("span");
    fillBox.appendChild(fill);
    head.append(name, time, fillBox, state);
    element.appendChild(head);
    let seek = null;
    if (this.seekable.has(id)) {
      seek = document.createElement("input");
      seek.type = "range";
      seek.min = 0;
      seek.disabled = true;
      seek.style.visibility = "hidden";
      seek.id = `seek-${id}`.replace(/[^A-Za-z0-9_-]/g, "_");
      const label = document.createElement("label");
      label.htmlFor = seek.id;
      label.textContent = `Seek ${id}`;
      label.className = "visually-hidden";
      seek.addEventListener("change", () => {
        this.connection.request("seek", { node: id, seconds: Number(seek.value) })
          .catch((e) => this.showError(e.message));
      });
      element.append(label, seek);
    }
    this.streams.appendChild(element);
    return { element, time, state, fill, fillBox, seek };
  }
}
