import Foundation

/// Times the iPod EQ kernel alone on stereo noise, for the benchmark script.
public enum KernelBenchmark {
    /// Renders `seconds` of audio at `sampleRate` through the kernel in `blockFrames` slices; returns the real-time factor.
    public static func ipodEQ(seconds: Double, sampleRate: Int = 48000, blockFrames: Int = 4096, preset: String = "Rock") -> Double {
        let channels = 2
        let format = GraphFormat(sampleRate: sampleRate, channels: channels, maxFrames: blockFrames)
        let instance = IPodEQInstance(id: "eq", settings: IPodEQSettings(gains: IPodEQPreset.named(preset)!.gains, preamp: 0), format: format)
        defer { instance.close() }
        let input = UnsafeMutablePointer<Float>.allocate(capacity: channels * blockFrames)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: channels * blockFrames)
        defer { input.deallocate(); output.deallocate() }
        var seed: UInt32 = 1
        for i in 0..<(channels * blockFrames) {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            input[i] = Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.5
        }
        let blocks = Int(seconds * Double(sampleRate)) / blockFrames
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<blocks {
            instance.kernelPointer.pointee.process(input: input, output: output, channelStride: blockFrames,
                                                   channels: channels, frames: blockFrames)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(blocks * blockFrames) / Double(sampleRate) / elapsed
    }
}
