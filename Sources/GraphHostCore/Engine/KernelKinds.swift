/// Every kind of render kernel, in one place. A new kind adds a case to `RenderStep.Kernel`, a case to
/// `KernelChange` if it takes changes, and one line to each switch below; its kernel conforms to `RenderKernel`.
extension RenderStep {
    /// A step's kernel, addressed by pointer into memory the control world owns.
    public enum Kernel {
        case stream(UnsafeMutablePointer<StreamKernel>)
        case mixer(UnsafeMutablePointer<MixerKernel>)
        case ipodEQ(UnsafeMutablePointer<IPodEQKernel>)
        case lv2(UnsafeMutablePointer<LV2Kernel>)
        case crossfade(UnsafeMutablePointer<CrossfadeKernel>)
        case midi(UnsafeMutablePointer<MIDISourceKernel>)
        case peq(UnsafeMutablePointer<PEQKernel>)
        case isolated(UnsafeMutablePointer<IsolatedKernel>)
        case output
    }
}

/// A change for one kernel: it names the kernel by pointer and carries that kernel's own `Change`, so a change cannot
/// reach a kernel of another kind.
public enum KernelChange {
    case stream(UnsafeMutablePointer<StreamKernel>, StreamKernel.Change)
    case mixer(UnsafeMutablePointer<MixerKernel>, MixerKernel.Change)
    case ipodEQ(UnsafeMutablePointer<IPodEQKernel>, IPodEQKernel.Change)
    case lv2(UnsafeMutablePointer<LV2Kernel>, LV2Kernel.Change)
    case peq(UnsafeMutablePointer<PEQKernel>, PEQKernel.Change)
}

extension RenderStep.Kernel {
    /// Renders `step` (whose kernel this is) over one slice.
    @_noLocks @inline(__always)
    func render(_ step: RenderStep, _ slice: RenderSlice) {
        switch self {
        case .stream(let k): k.pointee.render(step, slice)
        case .mixer(let k): k.pointee.render(step, slice)
        case .ipodEQ(let k): k.pointee.render(step, slice)
        case .lv2(let k): k.pointee.render(step, slice)
        case .crossfade(let k): k.pointee.render(step, slice)
        case .midi(let k): k.pointee.render(step, slice)
        case .peq(let k): k.pointee.render(step, slice)
        case .isolated(let k): k.pointee.render(step, slice)
        case .output: break
        }
    }

    /// The kernel's memory address: its identity across plans.
    public var address: UnsafeMutableRawPointer? {
        @_noLocks get {
            switch self {
            case .stream(let k): return UnsafeMutableRawPointer(k)
            case .mixer(let k): return UnsafeMutableRawPointer(k)
            case .ipodEQ(let k): return UnsafeMutableRawPointer(k)
            case .lv2(let k): return UnsafeMutableRawPointer(k)
            case .crossfade(let k): return UnsafeMutableRawPointer(k)
            case .midi(let k): return UnsafeMutableRawPointer(k)
            case .peq(let k): return UnsafeMutableRawPointer(k)
            case .isolated(let k): return UnsafeMutableRawPointer(k)
            case .output: return nil
            }
        }
    }
}

extension KernelChange {
    /// Applies the change to its kernel (render world, at the start of a render call).
    @_noLocks @inline(__always)
    func apply() {
        switch self {
        case .stream(let k, let change): k.pointee.apply(change)
        case .mixer(let k, let change): k.pointee.apply(change)
        case .ipodEQ(let k, let change): k.pointee.apply(change)
        case .lv2(let k, let change): k.pointee.apply(change)
        case .peq(let k, let change): k.pointee.apply(change)
        }
    }
}
