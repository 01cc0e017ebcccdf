// The event log: commands from every surface, reloads, xruns naming the slow node, reconnects, recording drops.

const LIMIT = 200;
const WARNINGS = new Set(["xruns", "underruns", "overrun", "loadDominated", "silenced", "pluginProcess", "damaged",
  "recordingDropped", "streamRetrying", "memoryNotLocked"]);

export function describe(event) {
  if (event.event === "command") return `command: ${event.command}`;
  const { event: name, ...rest } = event;
  const words = Object.entries(rest).map(([k, v]) => `${k} ${typeof v === "number" ? +v.toFixed(3) : JSON.stringify(v)}`);
  return `${name}${words.length ? ": " + words.join(", ") : ""}`;
}

export class EventLog {
  constructor(list) { this.list = list; }

  add(event, kind = null) {
    const item = document.createElement("li");
    const time = new Date().toLocaleTimeString();
    item.textContent = `${time} ${typeof event === "string" ? event : describe(event)}`;
    item.dataset.event = typeof event === "string" ? "page" : event.event;
    if (kind) item.className = kind;
    else if (event.event === "streamFailed" || (event.event === "reload" && !event.ok)) item.className = "error";
    else if (WARNINGS.has(event.event)) item.className = "warning";
    this.list.prepend(item);
    while (this.list.childElementCount > LIMIT) this.list.lastChild.remove();
  }
}
