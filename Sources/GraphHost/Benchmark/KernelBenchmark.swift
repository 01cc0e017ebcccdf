import CThreadGlue
import Dispatch
import FoundationEssentials
import Glibc

/// Times the iPod EQ kernel alone on stereo noise, LV2 plugins in the LV2 kernel, and the stream decoders, for the
/// benchmark script.
public enum KernelBenchmark {
    /// Decodes the media file at `path` with the stream node's decoders (format told from its content, interleaved
    /// Float32 at its own rate, nothing written); returns the frames decoded and the media's description.
    public static func decode(path: String) throws -> (frames: Int, media: String) {
        let input = MediaInput(try FileByteSource(path: path))
        let decoder = try MediaSniffer.detect(input).decoder(reading: input)
        var frames = 0
        while try decoder.decodeNext(emit: { _, count, _, _ in frames += count }) {}
        return (frames, decoder.info?.description ?? "unknown")
    }

    /// Renders `seconds` of audio at `sampleRate` through the kernel in `blockFrames` slices; returns the real-time
    /// factor.
    public static func ipodEQ(
        seconds: Double, sampleRate: Int = 48000, blockFrames: Int = 4096, preset: String = "Rock"
    ) -> Double {
        let channels = 2
        let format = GraphFormat(sampleRate: sampleRate, channels: channels, maxFrames: blockFrames)
        let instance = IPodEQInstance(
            id: "eq", settings: IPodEQSettings(gains: IPodEQPreset.named(preset)!.gains, preamp: 0), format: format)
        defer { instance.close() }
        // Cache-line aligned, as a host's buffers usually are (lv2bench's among them).
        let input = UnsafeMutableRawPointer.allocate(byteCount: 4 * channels * blockFrames, alignment: 64).bindMemory(
            to: Float.self, capacity: channels * blockFrames)
        let output = UnsafeMutableRawPointer.allocate(byteCount: 4 * channels * blockFrames, alignment: 64).bindMemory(
            to: Float.self, capacity: channels * blockFrames)
        defer {
            input.deallocate()
            output.deallocate()
        }
        fillWithNoise(input, count: channels * blockFrames, seed: 1)
        let blocks = Int(seconds * Double(sampleRate)) / blockFrames
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<blocks {
            instance.kernelPointer.pointee.process(
                input: input, output: output, channelStride: blockFrames,
                channels: channels, frames: blockFrames)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(blocks * blockFrames) / Double(sampleRate) / elapsed
    }

    /// Deterministic white noise at −6 dBFS (a linear congruential generator).
    static func fillWithNoise(_ buffer: UnsafeMutablePointer<Float>, count: Int, seed: UInt32) {
        var state = seed
        for i in 0..<count {
            state = state &* 1_664_525 &+ 1_013_904_223
            buffer[i] = Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.5
        }
    }

    /// Runs an LV2 plugin through graphhost's `LV2Kernel` on noise, like `lv2bench -b block -n frames`:
    /// returns the seconds spent in the kernel. The bus has as many channels as the plugin has audio inputs.
    public static func lv2(uri: String, blockFrames: Int, frames: Int, sampleRate: Int = 48000) throws -> Double {
        guard let plugin = LV2World.shared.plugin(uri) else { throw BenchmarkError.noPlugin(uri: uri) }
        let channels = max(1, plugin.audioPorts(input: true).count)
        let text = """
            { "format": { "sampleRate": \(sampleRate), "channels": \(channels), "maxFrames": \(blockFrames) },
              "nodes": [ { "id": "in", "type": "mixer", "inputs": 1 }, { "id": "fx", "type": "lv2", "uri": "\(uri)" }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "in", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """
        let graph = try CompiledGraph(
            try GraphDocument.parse(text: text, file: URL(fileURLWithPath: "/tmp/bench.json")))
        defer { graph.close() }
        guard case .lv2(let kernel) = graph.instances["fx"]!.kernel else { throw BenchmarkError.notLV2Kernel }
        // Cache-line aligned, as a host's buffers usually are (lv2bench's among them).
        let input = UnsafeMutableRawPointer.allocate(byteCount: 4 * channels * blockFrames, alignment: 64).bindMemory(
            to: Float.self, capacity: channels * blockFrames)
        let output = UnsafeMutableRawPointer.allocate(byteCount: 4 * channels * blockFrames, alignment: 64).bindMemory(
            to: Float.self, capacity: channels * blockFrames)
        defer {
            input.deallocate()
            output.deallocate()
        }
        fillWithNoise(input, count: channels * blockFrames, seed: 7)
        gh_enable_flush_to_zero()
        let start = DispatchTime.now().uptimeNanoseconds
        var done = 0
        while done < frames {
            let n = min(blockFrames, frames - done)
            kernel.pointee.process(
                input: input, output: output, channelStride: blockFrames, channels: channels, frames: n)
            done += n
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
