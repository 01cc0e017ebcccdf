import Dispatch
import GraphHostCore
import NIOCore
import NIOWebSocket
import Synchronization

/// One page connected over the WebSocket. Its messages (`WebRequest`) become typed commands for
/// `LiveControl.perform` and subscriptions; it receives the graph, a reply per message, every published event, the
/// values the nodes play after any command from any surface, and its feeds at the rates it asked for. What it is
/// sent waits in a queue of `queueLimit` messages: a page that reads too slowly loses the oldest, and never holds up
/// the render world, the other pages or the other surfaces. Its feeds are written on its connection's event loop
/// (`startFeeds`), the first update of a feed as soon as it is subscribed.
final class WebClient: Sendable {
    let control: LiveControl
    let version: String
    /// The running graph's folder: `load` takes the name of a graph file there (`GraphFiles`).
    let folder: String
    /// What the page's commands may read: files in the graph's folder or graphhost's own.
    let files: FileAccess
    /// The text messages to send, in order.
    let outgoing: AsyncStream<String>
    private let sender: AsyncStream<String>.Continuation

    private struct State {
        var schedule = FeedSchedule<WebRequest.WebFeed>()
        var closed = false
        /// Runs the feeds' turn now instead of when it is next due (set by `startFeeds`).
        var wake: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    static let queueLimit = 256
    /// The longest a turn waits when no feed is due sooner, in milliseconds.
    static let idleMillis = 1000

    init(control: LiveControl, version: String, folder: String) {
        self.control = control
        self.version = version
        self.folder = folder
        files = .remote(graphFolder: folder)
        (outgoing, sender) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(Self.queueLimit))
    }

    func send(_ message: JSONValue) { sender.yield(message.compact) }

    /// The graph as the page draws it.
    func graph() -> JSONValue { control.withSession { WebGraph($0, version: version).json } }

    /// Where the values sent after commands are read and sent, one after another: a read that started before a
    /// later command is never sent after that command's, so the last values a page is sent are the newest.
    private let valuesQueue = DispatchQueue(label: "graphhost-web-values")

    /// A published event: sent as it is, then, after a command, the values every node plays now (or the graph,
    /// after a swap), read on another thread since the event may be published where the session is held.
    func event(_ event: ControlEvent) {
        send(.object([("type", .string("event")), ("event", event.json)]))
        let graphChanged: Bool
        switch event {
        case .command(let line): graphChanged = line.hasPrefix("chain ") || line.hasPrefix("load ")
        case .reload: graphChanged = true
        default: return
        }
        valuesQueue.async { [self] in
            guard !state.withLock({ $0.closed }) else { return }
            send(graphChanged ? graph() : control.withSession { WebGraph.values($0) })
        }
    }

    /// Handles one text message from the page.
    func receive(_ text: String) async {
        let (id, decoded) = WebRequest.decode(text)
        switch decoded {
        case .failure(let refusal): reply(id, error: refusal.message)
        case .success(let request):
            switch request {
            case .command(var command):
                if case .load(let name, let swap) = command {
                    guard let path = GraphFiles.path(name, folder: folder) else {
                        return reply(id, error: "'\(name)' is not a graph file in the graph's folder")
                    }
                    command = .load(path: path, swap: swap)
                }
                let (control, command, files) = (control, command, files)
                let result: Result<ControlResult, ControlError> = await Self.offThread {
                    do throws(ControlError) { return .success(try control.perform(command, files: files)) } catch {
                        return .failure(error)
                    }
                }
                switch result {
                case .success: reply(id, error: nil)
                case .failure(let error): reply(id, error: files.redact(error.description))
                }
            case .graph:
                send(graph())
                reply(id, error: nil)
            case .response(let node): reply(id, answer: await Self.offThread { self.response(node) })
            case .subscribe(let feed, let rate):
                if case .feed(let f) = feed, !state.withLock({ $0.schedule.feeds.contains(feed) }) {
                    do throws(ControlError) { try control.watch(f) } catch {
                        return reply(id, error: error.description)
                    }
                }
                let wake = state.withLock { s in
                    s.schedule.add(feed, rate: rate)
                    return s.wake
                }
                wake?()
                reply(id, error: nil)
            case .unsubscribe(let feed):
                let removed = state.withLock { $0.schedule.remove(feed) }
                if removed, case .feed(let f) = feed { control.unwatch(f) }
                reply(id, error: nil)
            }
        }
    }

    /// Writes the page's feeds on `channel`, its WebSocket connection, from a timer on the connection's event loop:
    /// each turn's messages go out as frames in one write, with no task or thread switch (a turn costs the loop one
    /// wake-up), until the page closes. A turn that finds the connection unable to take more drops its updates. A
    /// subscription runs the turn at once (its feed's first update is due then), in place of the one scheduled.
    func startFeeds(on channel: any Channel) {
        let loop = channel.eventLoop
        let next = NIOLoopBoundBox<Scheduled<Void>?>.makeEmptyBox(valueType: Scheduled<Void>.self, eventLoop: loop)
        @Sendable func turn() {
            guard channel.isActive, !state.withLock({ $0.closed }) else { return }
            let (messages, wait) = self.turn()
            if channel.isWritable {
                for message in messages {
                    let frame = WebSocketFrame(
                        fin: true, opcode: .text, data: channel.allocator.buffer(string: message))
                    channel.write(frame, promise: nil)
                }
                if !messages.isEmpty { channel.flush() }
            }
            next.value = loop.scheduleTask(in: .milliseconds(Int64(wait))) { turn() }
        }
        state.withLock { s in
            s.wake = {
                loop.execute {
                    next.value?.cancel()
                    turn()
                }
            }
        }
        loop.execute { turn() }
    }

    /// The feeds whose time has come, as messages, and the milliseconds until the next is due.
    func turn(now: Int = MonotonicClock.nanos()) -> (messages: [String], waitMillis: Int) {
        let (due, wait) = state.withLock { s in
            (s.schedule.takeDue(now: now), Int(s.schedule.timeout(cap: Int32(Self.idleMillis), now: now)))
        }
        return (due.compactMap { feedMessage($0, now: now) }, max(1, wait))
    }

    /// Stops the page's feeds (what they measured stops when no one else watches).
    func close() {
        let feeds = state.withLock { s in
            s.closed = true
            s.wake = nil
            return s.schedule.feeds
        }
        for case .feed(let f) in feeds { control.unwatch(f) }
        sender.finish()
    }

    private func feedMessage(_ feed: WebRequest.WebFeed, now: Int) -> String? {
        let time = Double(now) / 1e9
        switch feed {
        case .feed(let f):
            guard let reading = try? control.read(f) else { return nil }
            // {"feed":NAME,"reading":READING,"type":"feed"}, as JSONValue would write it.
            return #"{"feed":""# + reading.name + #"","reading":"# + reading.compactJSON(time: time)
                + #","type":"feed"}"#
        case .transport:
            guard case .status(let status)? = try? control.perform(.status) else { return nil }
            return JSONValue.object([
                ("type", .string("transport")), ("time", .number(time)), ("playing", .bool(status.playing)),
                ("position", .number(status.position)), ("streams", .array(status.streams.map(\.json))),
            ]).compact
        }
    }

    /// The node's response, computed outside the session's lock (an EQ measures its impulse response).
    private func response(_ node: String) -> Result<JSONValue, WebRequest.Refusal> {
        let found = control.withSession { session -> (any NodeDefinition, Int)? in
            let document = session.graph.document
            return document.nodes.first { $0.id == node }.map { ($0.definition, document.format.sampleRate) }
        }
        guard let (definition, sampleRate) = found else { return .failure(WebRequest.Refusal("no node '\(node)'")) }
        guard let curve = definition as? any FrequencyResponding else {
            return .failure(
                WebRequest.Refusal("node '\(node)' (\(definition.typeName)) has no fixed frequency response"))
        }
        let response = NodeResponse(curve, id: node, sampleRate: sampleRate)
        return .success(
            .object([
                ("type", .string("response")), ("node", .string(node)),
                ("points", .array(response.points.map { .array([.number($0.frequency), .number($0.dB)]) })),
            ]))
    }

    private func reply(_ id: JSONValue?, answer: Result<JSONValue, WebRequest.Refusal>) {
        switch answer {
        case .success(let message):
            send(message)
            reply(id, error: nil)
        case .failure(let refusal): reply(id, error: refusal.message)
        }
    }

    private func reply(_ id: JSONValue?, error: String?) {
        send(
            .members([
                ("type", .string("reply")), ("id", id), ("ok", .bool(error == nil)),
                ("error", error.map(JSONValue.string)),
            ]))
    }

    /// Runs `body` on a thread of its own (a command may build a graph), off the server's tasks.
    static func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }
}
