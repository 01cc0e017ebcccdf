import Glibc
import GraphHostCore
import GraphHostDSP

/// The built-in `ipod-eq` as an LV2 plugin (Plugins/graphhost-ipod-eq.lv2); the C target
/// CIPodEQLV2Glue supplies `lv2_descriptor` and forwards every callback to the functions below.
///
/// run() is hard real-time (`@_noLocks`, checked by the compiler): it never allocates, locks or waits. Designing
/// coefficients allocates, so it runs on a designer thread the instance owns, exactly as the control world does for the
/// built-in node: run() posts changed controls through a lock-free queue, the thread designs the
/// coefficients, warms their filter bank on the input history (`IPodEQWorkspace.warm`) and posts them
/// back, and run() crossfades to them over 30 ms (`IPodEQKernel.apply`) after running the bank over the
/// few frames that came since. A design the thread could not warm is warmed by run() at the live pace.
/// activate() designs the current controls directly, so processing starts on them without a crossfade.
final class IPodEQPlugin {
    /// Port indices, as in graphhost-ipod-eq.ttl.
    enum Port {
        static let inL = 0, inR = 1, outL = 2, outR = 3, firstBand = 4, preamp = 14, preset = 15, count = 16
    }

    /// Sizes of the buffers below.
    enum Layout {
        /// Frames per kernel call; the host's block is processed in pieces of at most this size.
        static let blockFrames = 256
        /// Lane of the preamp in a control snapshot (lanes 0…9 are the band gains).
        static let preampLane = 10
    }

    /// Designer → run(): coefficients, the control snapshot they were designed for, and the workspace slot and
    /// frame their warmed bank waits at (slot -1: not warmed).
    struct Design {
        var coefficients: ParallelEQCoefficients
        var controls: SIMD16<Float>
        var slot = -1
        var through = 0
    }

    let sampleRate: Int
    let ports = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: Port.count)
    let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
    let workspace = IPodEQWorkspace.allocate(channels: 2, maxFrames: Layout.blockFrames)
    let kernel = UnsafeMutablePointer<IPodEQKernel>.allocate(capacity: 1)
    /// Two channels of `Layout.blockFrames`, processed in place.
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * Layout.blockFrames)
    /// run() → designer: control snapshots (`SIMD16<Float>`).
    let requests = ByteRing.allocate(capacity: 1 << 11)
    /// Designer → run(): `Design`s.
    let results = ByteRing.allocate(capacity: 1 << 14)
    /// Where run() reads a design and writes a request (plain memory, so the rings copy bytes only).
    let design = UnsafeMutablePointer<Design>.allocate(capacity: 1)
    let request = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 1)
    let wake = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    /// Set before the last post of `wake`: the designer thread ends.
    var stopping = false
    var thread = pthread_t()
    /// The controls of the kernel's target coefficients, or of the newest request.
    var requested: SIMD16<Float>

    init?(sampleRate: Double) {
        guard sampleRate.isFinite, sampleRate >= 1 else { return nil }
        self.sampleRate = Int(sampleRate.rounded())
        ports.initialize(repeating: nil, count: Port.count)
        state.initialize(repeating: SIMD16<Float>(), count: 2 * IPodEQKernel.stateVectors)
        requested = Self.defaults
        kernel.initialize(
            to: Self.kernel(state: state, controls: Self.defaults, sampleRate: self.sampleRate, workspace: workspace))
        sem_init(wake, 0, 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<IPodEQPlugin>.fromOpaque(context!).takeUnretainedValue().designLoop()
                    return nil
                }, context) == 0
        else {
            release()
            return nil
        }
    }

    /// Stops the designer thread and frees everything (LV2 cleanup).
    func shutdown() {
        stopping = true
        sem_post(wake)
        pthread_join(thread, nil)
        release()
    }

    private func release() {
        sem_destroy(wake)
        wake.deallocate()
        requests.deallocate()
        results.deallocate()
        design.deallocate()
        request.deallocate()
        kernel.deinitialize(count: 1).deallocate()
        state.deallocate()
        workspace.deallocate()
        scratch.deallocate()
        ports.deallocate()
    }

    /// All bands 0 dB, preamp 0 dB.
    static let defaults = SIMD16<Float>()

    /// The control ports as a snapshot: band gains clamped to ±12 dB, preamp to ±24 dB, NaN or unconnected = 0.
    @_noLocks @inline(__always)
    func controls() -> SIMD16<Float> {
        var c = SIMD16<Float>()
        for lane in 0...Layout.preampLane {
            let limit: Float = lane == Layout.preampLane ? 24 : 12
            if let p = ports[Port.firstBand + lane], p.pointee.isFinite { c[lane] = min(max(p.pointee, -limit), limit) }
        }
        return c
    }

    /// Coefficients for a control snapshot (allocates: not for run()).
    static func coefficients(_ c: SIMD16<Float>, sampleRate: Int) -> ParallelEQCoefficients {
        let settings = IPodEQSettings(
            gains: (0..<GraphicEQDesign.bandCount).map { Double(c[$0]) }, preamp: Double(c[Layout.preampLane]))
        return ParallelEQCoefficients(
            sections: GraphicEQDesign.bandCount, values: settings.kernelValues(sampleRate: sampleRate))
    }

    /// A kernel on the coefficients of `controls`, warming unwarmed changes at the live pace.
    static func kernel(
        state: UnsafeMutablePointer<SIMD16<Float>>, controls: SIMD16<Float>, sampleRate: Int,
        workspace: IPodEQWorkspace
    ) -> IPodEQKernel {
        var kernel = IPodEQKernel(
            state: state, coefficients: coefficients(controls, sampleRate: sampleRate),
            rampSamples: Int(IPodEQKernel.rampSeconds * Double(sampleRate)), workspace: workspace)
        kernel.warmPace = IPodEQKernel.liveWarmPace
        return kernel
    }

    /// Designer thread: designs and warms the newest request and posts the result, until told to stop.
    func designLoop() {
        var controls = SIMD16<Float>()
        while true {
            while sem_wait(wake) != 0 {}
            if stopping { return }
            var newest: SIMD16<Float>?
            while requests.read(into: &controls, capacity: MemoryLayout<SIMD16<Float>>.size) != nil {
                newest = controls
            }
            guard let newest else { continue }
            var result = Design(coefficients: Self.coefficients(newest, sampleRate: sampleRate), controls: newest)
            if let warmed = workspace.warm(result.coefficients) { (result.slot, result.through) = warmed }
            // Never full: run() drains it on every call and adds at most one request per call.
            _ = results.write(&result, size: MemoryLayout<Design>.size)
        }
    }

    /// LV2 activate: clears the filter state and designs the current controls (no crossfade).
    func activate() {
        state.update(repeating: SIMD16<Float>(), count: 2 * IPodEQKernel.stateVectors)
        requested = controls()
        kernel.pointee.restart(coefficients: Self.coefficients(requested, sampleRate: sampleRate))
    }

    /// LV2 run: real-time safe for any `frames`; in-place buffers are fine.
    @_noLocks
    func run(_ frames: Int) {
        while results.read(into: design, capacity: MemoryLayout<Design>.size) != nil {
            let d = design.pointee
            if d.controls != requested {
                // Older designs are stale.
                if d.slot >= 0 { workspace.slots.release(slot: d.slot) }
            } else if d.slot >= 0 {
                kernel.pointee.apply(.warmed(d.coefficients, through: d.through, slot: d.slot))
            } else {
                kernel.pointee.apply(.coefficients(d.coefficients))
            }
        }
        let c = controls()
        if c != requested {
            request.pointee = c
            if requests.write(request, size: MemoryLayout<SIMD16<Float>>.size) {
                requested = c
                // sem_post never blocks (async-signal-safe).
                let semaphore = wake
                _unsafePerformance { _ = sem_post(semaphore) }
            }
        }
        guard let inL = ports[Port.inL], let inR = ports[Port.inR], let outL = ports[Port.outL],
            let outR = ports[Port.outR]
        else { return }
        let right = scratch + Layout.blockFrames
        var done = 0
        while done < frames {
            let n = min(Layout.blockFrames, frames - done)
            for i in 0..<n {
                scratch[i] = inL[done + i]
                right[i] = inR[done + i]
            }
            kernel.pointee.process(
                input: scratch, output: scratch, channelStride: Layout.blockFrames, channels: 2, frames: n)
            for i in 0..<n {
                outL[done + i] = scratch[i]
                outR[done + i] = right[i]
            }
            done += n
        }
    }
}

@_cdecl("gh_ipod_eq_instantiate")
public func graphhostIPodEQInstantiate(_ sampleRate: Double) -> UnsafeMutableRawPointer? {
    IPodEQPlugin(sampleRate: sampleRate).map { Unmanaged.passRetained($0).toOpaque() }
}

@inline(__always)
private func plugin(_ handle: UnsafeMutableRawPointer) -> IPodEQPlugin {
    Unmanaged<IPodEQPlugin>.fromOpaque(handle).takeUnretainedValue()
}

@_cdecl("gh_ipod_eq_connect_port")
public func graphhostIPodEQConnectPort(
    _ handle: UnsafeMutableRawPointer, _ port: UInt32, _ data: UnsafeMutableRawPointer?
) {
    let p = plugin(handle)
    guard Int(port) < IPodEQPlugin.Port.count else { return }
    p.ports[Int(port)] = data?.assumingMemoryBound(to: Float.self)
}

@_cdecl("gh_ipod_eq_activate")
public func graphhostIPodEQActivate(_ handle: UnsafeMutableRawPointer) { plugin(handle).activate() }

@_cdecl("gh_ipod_eq_run")
public func graphhostIPodEQRun(_ handle: UnsafeMutableRawPointer, _ frames: UInt32) {
    Unmanaged<IPodEQPlugin>.fromOpaque(handle)._withUnsafeGuaranteedRef { $0.run(Int(frames)) }  // no retain/release
}

@_cdecl("gh_ipod_eq_deactivate")
public func graphhostIPodEQDeactivate(_ handle: UnsafeMutableRawPointer) {}

@_cdecl("gh_ipod_eq_cleanup")
public func graphhostIPodEQCleanup(_ handle: UnsafeMutableRawPointer) {
    Unmanaged<IPodEQPlugin>.fromOpaque(handle).takeRetainedValue().shutdown()
}
