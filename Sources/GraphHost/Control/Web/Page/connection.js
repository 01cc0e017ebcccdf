// The page's WebSocket to graphhost: requests with ids and their replies, the messages graphhost sends by type,
// and reconnection (the page's subscriptions are made again on each new connection).

export class Connection {
  constructor(onStateChange) {
    this.handlers = new Map();
    this.pending = new Map();
    this.subscriptions = new Map();
    this.nextId = 1;
    this.onStateChange = onStateChange;
    this.retryMillis = 250;
    this.open();
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.socket = new WebSocket(`${scheme}//${location.host}/ws`);
    this.socket.addEventListener("open", () => {
      this.retryMillis = 250;
      this.onStateChange("open");
      for (const [key, { fields, rate }] of this.subscriptions) this.send({ op: "subscribe", ...fields, rate });
    });
    this.socket.addEventListener("message", (event) => this.receive(JSON.parse(event.data)));
    this.socket.addEventListener("close", () => {
      this.onStateChange("closed");
      for (const [, reject] of this.pending.values()) reject(new Error("the connection to graphhost closed"));
      this.pending.clear();
      setTimeout(() => this.open(), this.retryMillis);
      this.retryMillis = Math.min(this.retryMillis * 2, 5000);
    });
  }

  receive(message) {
    if (message.type === "reply") {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.ok) waiting[0](message); else waiting[1](new Error(message.error));
      return;
    }
    for (const handler of this.handlers.get(message.type) || []) handler(message);
  }

  /// Calls `handler` with every message of `type` ("graph", "values", "event", "feed", "status", "response").
  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(handler);
  }

  send(message) {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /// Sends a request and resolves with its reply, or rejects with graphhost's error.
  request(op, fields = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected to graphhost"));
        return;
      }
      this.pending.set(id, [resolve, reject]);
      this.socket.send(JSON.stringify({ id, op, ...fields }));
    });
  }

  /// Keeps a feed subscribed at `rate` a second, across reconnections.
  subscribe(fields, rate) {
    const key = JSON.stringify(fields);
    this.subscriptions.set(key, { fields, rate });
    return this.request("subscribe", { ...fields, rate });
  }

  unsubscribe(fields) {
    this.subscriptions.delete(JSON.stringify(fields));
    return this.request("unsubscribe", fields);
  }
}
