import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost

/// The `graphhost` command line.
struct GraphHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graphhost",
        abstract: """
            A real-time DSP effects host for Linux: JSON graphs of streams (files, HTTP, Icecast, HLS), mixers, \
            an iPod-style EQ, a parametric EQ, LV2 plugins, live inputs, virtual sinks and outputs, played through \
            PipeWire or rendered offline.
            """,
        discussion: """
            `graphhost run` plays a graph and takes live commands from its console, its socket (`graphhost ctl`), OSC, \
            MPRIS and MIDI; `graphhost render` renders one into a file, faster than real time.
            """,
        version: "0.1.0",
        subcommands: [
            ValidateCommand.self, ShowCommand.self, RenderCommand.self, RunCommand.self, CtlCommand.self,
            PluginsCommand.self, PresetsCommand.self, EQCurveCommand.self, BenchKernelCommand.self, SchemaCommand.self,
            ServiceCommand.self, PluginHostCommand.self,
        ]
    )
}

/// Prints to standard error.
func printError(_ text: String) {
    writeToStandardError(text + "\n")
}

/// Loads and validates a graph, printing every error; exits non-zero when invalid.
func loadGraph(_ path: String) throws -> GraphDocument {
    do {
        let document = try GraphDocument.load(path: path)
        for warning in document.warnings { printError("warning: \(warning)") }
        return document
    } catch let errors as GraphErrors {
        printError(errors.description)
        throw ExitCode(2)
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "Check a graph file; print each problem with its JSON path.")
    @Argument(help: "The graph JSON file.") var graph: String

    func run() throws {
        let doc = try loadGraph(graph)
        print("\(graph): valid (\(doc.nodes.count) nodes, \(doc.links.count) links)")
    }
}

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print a graph: nodes, formats, links and render order.")
    @Argument(help: "The graph JSON file.") var graph: String
    @Flag(help: "Print Graphviz DOT instead of text.") var dot = false

    func run() throws {
        let doc = try loadGraph(graph)
        print(dot ? GraphPrinter.dot(doc) : GraphPrinter.text(doc), terminator: "")
        guard !dot, doc.nodes.contains(where: { $0.definition.traits.contains(.hasLatency) }) else { return }
        let compiled = try CompiledGraph(doc)
        defer { compiled.close() }
        let compensation = compiled.compensation
        for (id, instance) in compiled.instances.sorted(by: { $0.key < $1.key }) where instance.latency > 0 {
            print("latency: \(id) reports \(instance.latency) frames")
        }
        for (id, delays) in compensation.delays.sorted(by: { $0.key < $1.key }) where delays.contains(where: { $0 > 0 })
        {
            print(
                "latency: \(id) delays its inputs by "
                    + "\(delays.map(String.init).joined(separator: ", ")) frames to align them"
            )
        }
        print(
            "latency: the graph adds \(compensation.total) frames "
                + "(\(compensation.milliseconds(compensation.total, sampleRate: doc.format.sampleRate)) ms)"
        )
    }
}

/// Set by SIGINT or SIGTERM during `render`: the render stops and leaves no file behind.
private nonisolated(unsafe) var renderInterrupted: sig_atomic_t = 0

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a graph offline, as fast as possible, into a .wav, .flac, .ogg (Vorbis) or .opus file.",
        discussion:
            "--at SECONDS COMMAND applies a command at that exact frame, e.g. --at 2.5 'preset eq Rock', "
            + "--at 4 'set mix volume.1 0.25', --at 6 'chain fx bright' or --at 8 'load other.json'."
    )
    @Argument(help: "The graph JSON file.") var graph: String
    @Option(
        name: .shortAndLong,
        help:
            """
            Output file (.wav, .flac, .ogg or .opus; all but .wav clip at full scale); \
            with several output nodes, NODE=FILE for each to write (repeatable).
            """
    ) var output: [String]
    @Option(
        help:
            """
            Bits per sample: 16 (dithered) or 24 for .wav and .flac, 32 (float) for .wav \
            (default: .wav 32-bit float, .flac 24).
            """
    ) var bits: Int?
    @Option(help: "Seconds to render (default: until every stream has finished).") var duration: Double?
    @Option(parsing: .upToNextOption, help: "SECONDS COMMAND: apply COMMAND at that time (repeatable).") var at:
        [String] = []
    @Option(help: "Frames per render call (LV2 plugins are told it as their nominal block length).") var block: Int?
    @Option(help: "NODE=FILE: feed a capture or sink node from an MP3 file (repeatable).") var input: [String] = []
    @Option(help: "Write the levels of every meter that is on (the outputs, metered nodes) to this CSV file.")
    var meters: String?
    @Option(help: "Seconds between the rows of --meters.") var meterInterval = 0.1
    @Flag(help: "Print each output's integrated loudness, loudness range and true peak (EBU R128).") var loudness =
        false
    @Flag(help: "Print the DSP load: per node and for the render call, the time per call and its share of the block.")
    var load = false
    @OptionGroup var threads: ThreadsOption
    @Flag(help: "Run every plugin node in a helper process (as \"isolate\": true does for one).")
    var isolatePlugins = false

    func validate() throws {
        guard meterInterval > 0 && meterInterval.isFinite else {
            throw ValidationError("--meter-interval \(meterInterval) is not a positive number of seconds")
        }
    }

    func run() throws {
        PluginIsolation.everyPlugin = isolatePlugins
        var doc = try loadGraph(graph)
        let inputs = try input.map { item -> (node: String, file: String) in
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex, item.index(after: eq) != item.endIndex
            else {
                throw ValidationError("--input takes NODE=FILE, e.g. --input mic=voice.mp3; got '\(item)'")
            }
            return (String(item[..<eq]), String(item[item.index(after: eq)...]))
        }
        do { doc = try doc.feeding(inputs) } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
        for node in doc.nodes where node.definition.traits.contains(.isLiveInput) {
            printError(
                "warning: \(node.definition.typeName) node '\(node.id)' has no --input file; it is silent offline")
        }
        let rate = Double(doc.format.sampleRate)
        var events: [TimedCommand] = []
        var i = 0
        while i < at.count {
            guard let seconds = Double(at[i]), seconds >= 0, i + 1 < at.count else {
                throw ValidationError("--at takes SECONDS and a COMMAND, e.g. --at 2.5 'preset eq Rock'")
            }
            let request: Command
            do { request = try Command.parse(at[i + 1]) } catch {
                throw ValidationError("--at \(at[i]) '\(at[i + 1])': \(error)")
            }
            events.append(TimedCommand(frame: Int((seconds * rate).rounded()), request: request))
            i += 2
        }
        // One core asked for: the stream decoders share the render thread's (as one-thread decoders do; longest wall).
        if threads.threads == 1 { CoreAffinity.keepToCurrentCPU() }
        let session = GraphSession(graph: try CompiledGraph(doc, nominalFrames: block), threads: threads.threads)
        defer { session.close() }
        do { try OfflineRenderer.check(events, session: session) } catch { throw ValidationError("--\(error)") }
        let ids = doc.outputIDs
        var files: [Int: String] = [:]
        for item in output {
            if let eq = item.firstIndex(of: "="), let k = ids.firstIndex(of: String(item[..<eq])) {
                files[k] = String(item[item.index(after: eq)...])
            } else if ids.count == 1 {
                files[0] = item
            } else {
                throw ValidationError(
                    "the graph has \(ids.count) outputs (\(ids.joined(separator: ", "))): "
                        + "give -o NODE=FILE for each to write, not '\(item)'"
                )
            }
        }
        // Each file is written beside its target and renamed once the render succeeded: a failure leaves none behind.
        // An interruption is noted from before the first file exists, so none stays behind.
        signal(SIGINT) { _ in renderInterrupted = 1 }
        signal(SIGTERM) { _ in renderInterrupted = 1 }
        var writers: [Int: SoundFileWriter] = [:]
        do {
            for (k, path) in files {
                writers[k] = try SoundFileWriter(
                    path: path, sampleRate: doc.format.sampleRate, channels: doc.format.channels, bits: bits,
                    staged: true)
            }
        } catch {
            writers.values.forEach { $0.discard() }
            throw error
        }
        let loudnessMeters =
            loudness
            ? ids.map { _ in LoudnessMeter(channels: doc.format.channels, sampleRate: doc.format.sampleRate) } : []
        var renderer = OfflineRenderer(session: session, blockFrames: block, events: events)
        let meterLog = meters.map(MeterCSVWriter.init)
        if let meterLog {
            renderer.checkpointFrames = max(1, Int((meterInterval * rate).rounded()))
            renderer.checkpoint = { meterLog.add(session.graph.meterReadings, seconds: Double($0) / rate) }
        }
        let started = Date()
        let summary: OfflineRenderer.Summary
        do {
            summary = try renderer.render(
                durationFrames: duration.map { Int(($0 * rate).rounded()) }, outputs: ids.count
            ) { k, block, frames in
                if renderInterrupted != 0 { throw RenderError.interrupted }
                try writers[k]?.write(block, frames: frames)
                if k < loudnessMeters.count {
                    loudnessMeters[k].add(interleaved: block, frames: frames, channels: doc.format.channels)
                }
            }
        } catch {
            writers.values.forEach { $0.discard() }
            printError("error: \(error)")
            throw ExitCode(renderInterrupted != 0 ? 130 : 1)
        }
        do {
            try writers.values.forEach { try $0.commit() }
            try meterLog?.write()
        } catch {
            writers.values.forEach { $0.discard() }
            printError("error: \(error)")
            throw ExitCode(1)
        }
        session.drainLogs()
        let seconds = Double(summary.frames) / rate
        let elapsed = Date().timeIntervalSince(started)
        let peakDB = summary.peak > 0 ? Format.printf("%.2f dBFS", 20 * log10(Double(summary.peak))) : "-inf dBFS"
        let written = files.sorted { $0.key < $1.key }.map(\.value).joined(separator: ", ")
        let speed = Format.printf("%.0f", seconds / max(elapsed, 1e-9))
        let damage =
            summary.damage == StreamDamage()
            ? ""
            : ", damaged stream data: \(summary.damage.silencedFrames) frames silenced, "
                + "\(summary.damage.skippedBytes) bytes skipped"
        print(
            "wrote \(written): \(Format.printf("%.3f", seconds)) s, peak \(peakDB), \(speed)x real time, "
                + "underruns \(summary.underruns)" + damage
        )
        for (k, writer) in writers.sorted(by: { $0.key < $1.key }) where writer.clippedSamples > 0 {
            print(
                "\(files[k]!): clipped \(writer.clippedSamples) samples at full scale (the graph "
                    + "peaks at \(peakDB); lower a volume, or write .wav, which keeps them)"
            )
        }
        for (id, meter) in zip(ids, loudnessMeters) {
            func figure(_ value: Double) -> String { value.isFinite ? Format.printf("%.2f", value) : "-inf" }
            print(
                "loudness \(id): integrated \(figure(meter.integrated)) LUFS, range \(figure(meter.range)) LU, "
                    + "true peak \(figure(meter.truePeak)) dBTP")
        }
        for node in doc.nodes {
            guard node.definition.traits.contains(.numberedPresets), let preset = node.definition.presetName else {
                continue
            }
            let changes = events.compactMap { e in
                e.command.flatMap {
                    $0.node == node.id ? "at \(Format.printf("%.3f", Double(e.frame) / rate)) s: \($0.action)" : nil
                }
            }
            print("\(node.id): preset \(preset)" + (changes.isEmpty ? "" : ", then " + changes.joined(separator: ", ")))
        }
        if load, let snapshot = session.engine.pointee.timing.pointee.load.snapshot() {
            let reading = DSPLoad(from: nil, to: snapshot, sampleRate: rate, names: session.graph.kernelNames)
            reading.lines.forEach { print($0) }
            print("threads \(threads.threads): the workers rendered \(session.workerSteps) steps")
        }
    }
}

struct EQCurveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eq-curve",
        abstract:
            "Draw an iPod EQ preset's target and achieved response, the response of an Equalizer APO or AutoEQ "
            + "file, or that of a graph's EQ node.")
    @Argument(help: "Preset name or index, or an Equalizer APO / AutoEQ ParametricEQ.txt file.") var preset: String?
    @Option(help: "Draw the response of this graph's node --node instead (a node kind with a frequency response: peq).")
    var graph: String?
    @Option(help: "The node of --graph.") var node: String?
    @Option(help: "Sample rate in Hz (default 48000, or the graph's).") var rate: Int?
    @Option(help: "Write an SVG chart here.") var svg: String?
    @Option(help: "Write CSV here ('-' for standard output).") var csv: String?

    func run() throws {
        guard svg != nil || csv != nil else { throw ValidationError("give --svg FILE and/or --csv FILE") }
        let curve: (csv: String, svg: String)
        if let graph {
            guard let node, preset == nil else {
                throw ValidationError("give --graph FILE with --node ID and no preset")
            }
            let doc = try loadGraph(graph)
            guard let found = doc.nodes.first(where: { $0.id == node }) else {
                throw ValidationError(
                    "\(graph) has no node '\(node)'; nodes: \(doc.nodes.map(\.id).joined(separator: ", "))")
            }
            guard let filter = found.definition as? any FrequencyResponding else {
                throw ValidationError("node '\(node)' (\(found.definition.typeName)) has no fixed frequency response")
            }
            let response = NodeResponse(filter, id: node, sampleRate: rate ?? doc.format.sampleRate)
            curve = (response.csv, response.svg())
        } else if let preset, FileManager.default.fileExists(atPath: preset) {
            let rate = rate ?? 48000
            let path = URL(fileURLWithPath: preset).standardizedFileURL.path
            let file = try PEQNode.loadFile(path, sampleRate: rate, preamp: 0)
            let response = NodeResponse(
                PEQNode(file: file, given: preset, path: path), id: URL(fileURLWithPath: preset).lastPathComponent,
                sampleRate: rate)
            curve = (response.csv, response.svg())
        } else {
            guard let preset else { throw ValidationError("give a preset, or --graph FILE --node ID") }
            guard let p = IPodEQPreset.named(preset) else {
                throw ValidationError(
                    "unknown preset '\(preset)'; valid: \(IPodEQPreset.all.map(\.name).joined(separator: ", "))")
            }
            let response = EQCurve(preset: p, sampleRate: rate ?? 48000)
            curve = (response.csv, response.svg())
        }
        if let csv {
            if csv == "-" {
                print(curve.csv, terminator: "")
            } else {
                try curve.csv.write(toFile: csv, atomically: true, encoding: .utf8)
            }
        }
        if let svg {
            try curve.svg.write(toFile: svg, atomically: true, encoding: .utf8)
            print("wrote \(svg)")
        }
    }
}

struct BenchKernelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-kernel",
        abstract:
            "Time the iPod EQ kernel alone (stereo, 10 bands) and print "
            + "its real-time factor; or an LV2 plugin, or a decoder."
    )
    @Option(help: "Seconds of audio to process.") var seconds: Double = 600
    @Option(help: "Sample rate in Hz.") var rate: Int = 48000
    @Option(help: "Time this LV2 plugin in graphhost's LV2 kernel instead (compare with lv2bench).") var lv2: String?
    @Option(help: "Block size for --lv2.") var block: Int = 512
    @Option(help: "Frames for --lv2.") var frames: Int = 4_800_000
    @Option(help: "Decode this media file with the stream node's decoders instead (compare with ffmpeg -f null).")
    var decode: String?

    func run() throws {
        if let decode {
            let result = try KernelBenchmark.decode(path: decode)
            print("decoded \(result.frames) frames (\(result.media)) from \(decode)")
            return
        }
        if let lv2 {
            let seconds = try KernelBenchmark.lv2(uri: lv2, blockFrames: block, frames: frames, sampleRate: rate)
            print("\(block) \(frames) \(Format.printf("%.6f", seconds)) \(lv2)")
            return
        }
        let factor = KernelBenchmark.ipodEQ(seconds: seconds, sampleRate: rate)
        print(Format.printf("ipod-eq kernel: %.0fx real time (%.0f s of stereo audio at %d Hz)", factor, seconds, rate))
    }
}
