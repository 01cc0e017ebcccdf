// The page's WebSocket to graphhost: requests with ids and their replies, the messages graphhost sends by type,
// and reconnection. A request made while the socket is not open waits and is sent once it opens (a later request
// for the same thing takes its place); the page's subscriptions are made again on each new connection.

/// Why a request was not answered: the connection closed (or never opened) before its reply.
export class Disconnected extends Error {}

export class Connection {
  /// How many requests wait for the socket to open; past that the oldest is refused.
  static waitingLimit = 64;

  constructor(onStateChange) {
    this.handlers = new Map();
    this.pending = new Map();
    this.waiting = [];
    this.subscriptions = new Map();
    this.nextId = 1;
    this.onStateChange = onStateChange;
    this.retryMillis = 250;
    this.open();
  }

  get isOpen() { return this.socket.readyState === WebSocket.OPEN; }

  open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.socket = new WebSocket(`${scheme}//${location.host}/ws`);
    this.socket.addEventListener("open", () => {
      console.info(`graphhost: connected at ${performance.now().toFixed(0)} ms`);
      this.retryMillis = 250;
      this.onStateChange("open");
      for (const subscription of this.subscriptions.values()) this.sendSubscription(subscription);
      for (const request of this.waiting.splice(0)) this.transmit(request);
    });
    this.socket.addEventListener("message", (event) => this.receive(JSON.parse(event.data)));
    this.socket.addEventListener("close", (event) => {
      console.warn(`graphhost: the connection closed (${event.code}) at ${performance.now().toFixed(0)} ms; `
        + `trying again in ${this.retryMillis} ms`);
      this.onStateChange("closed");
      const unanswered = [...this.pending.values()];
      this.pending.clear();
      for (const request of unanswered) {
        for (const [, reject] of request.settle) reject(new Disconnected("the connection to graphhost closed"));
      }
      setTimeout(() => this.open(), this.retryMillis);
      this.retryMillis = Math.min(this.retryMillis * 2, 5000);
    });
  }

  receive(message) {
    if (message.type === "reply") {
      const request = this.pending.get(message.id);
      if (!request) return;
      this.pending.delete(message.id);
      for (const [resolve, reject] of request.settle) {
        if (message.ok) resolve(message); else reject(new Error(message.error));
      }
      return;
    }
    for (const handler of this.handlers.get(message.type) || []) handler(message);
  }

  /// Calls `handler` with every message of `type` ("graph", "values", "event", "feed", "transport", "response").
  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(handler);
  }

  /// Sends a request and resolves with its reply, or rejects with graphhost's error, or with `Disconnected` when
  /// the connection closed before the reply (whether graphhost carried it out is then unknown). While the socket
  /// is not open the request waits; a later one for the same thing (the same op and fields, or for `set` the same
  /// node and parameter) replaces it, and both settle with the later one's reply.
  request(op, fields = {}) {
    return new Promise((resolve, reject) => {
      const request = { op, fields, settle: [[resolve, reject]] };
      if (this.isOpen) {
        this.transmit(request);
        return;
      }
      request.key = JSON.stringify(op === "set" ? [op, fields.node, fields.parameter] : [op, fields]);
      const earlier = this.waiting.findIndex((r) => r.key === request.key);
      if (earlier >= 0) request.settle.unshift(...this.waiting.splice(earlier, 1)[0].settle);
      this.waiting.push(request);
      while (this.waiting.length > Connection.waitingLimit) {
        for (const [, refuse] of this.waiting.shift().settle) {
          refuse(new Disconnected("not connected to graphhost: too many changes waiting"));
        }
      }
    });
  }

  transmit(request) {
    const id = this.nextId++;
    this.pending.set(id, request);
    this.socket.send(JSON.stringify({ id, op: request.op, ...request.fields }));
  }

  /// Keeps a feed subscribed at `rate` a second, across reconnections: made now when the socket is open, else
  /// when it opens. Resolves with the reply of the subscription as made on a connection, or rejects with
  /// graphhost's error.
  subscribe(fields, rate) {
    const key = JSON.stringify(fields);
    const subscription = { fields, rate, settle: this.subscriptions.get(key)?.settle ?? [] };
    this.subscriptions.set(key, subscription);
    const settled = new Promise((resolve, reject) => subscription.settle.push([resolve, reject]));
    if (this.isOpen) this.sendSubscription(subscription);
    return settled;
  }

  /// Makes `subscription` on the open connection; one cut off by a close is made again on the next.
  sendSubscription(subscription) {
    const settle = (done) => { for (const pair of subscription.settle.splice(0)) done(pair); };
    this.request("subscribe", { ...subscription.fields, rate: subscription.rate }).then(
      (reply) => settle(([resolve]) => resolve(reply)),
      (error) => { if (!(error instanceof Disconnected)) settle(([, reject]) => reject(error)); });
  }

  /// Ends a feed's subscription (one not yet made is dropped: a connection's subscriptions end with it).
  unsubscribe(fields) {
    const key = JSON.stringify(fields);
    for (const [resolve] of this.subscriptions.get(key)?.settle.splice(0) ?? []) resolve(null);
    this.subscriptions.delete(key);
    return this.isOpen ? this.request("unsubscribe", fields) : Promise.resolve(null);
  }
}
