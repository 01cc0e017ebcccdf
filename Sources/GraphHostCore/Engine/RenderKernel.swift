/// What one step renders: `frames` frames of `channels` planar channels, `channelStride` apart in every bus.
public struct RenderSlice {
    public var frames: Int
    public var channels: Int
    public var channelStride: Int
    /// Plugin steps silence output holding NaN, Inf or a burst above +24 dBFS.
    public var guardOutput: Bool
    /// The musical transport plugins are told about.
    public var time: UnsafePointer<MusicalTime>?

    @_noLocks
    public init(
        frames: Int, channels: Int, channelStride: Int, guardOutput: Bool = false,
        time: UnsafePointer<MusicalTime>? = nil
    ) {
        self.frames = frames
        self.channels = channels
        self.channelStride = channelStride
        self.guardOutput = guardOutput
        self.time = time
    }
}

/// The render side of a node kind: renders a step's slice from its input buses into its output bus, and applies its
/// own kind of change at the start of a render call. Kernels are called through `RenderStep.Kernel`, an enum of
/// pointers to concrete types (KernelKinds.swift), so every call is static: implementations carry `@_noLocks`.
public protocol RenderKernel {
    /// The changes the control world sends this kernel (`Never`: it takes none).
    associatedtype Change = Never
    mutating func render(_ step: RenderStep, _ slice: RenderSlice)
    mutating func apply(_ change: Change)
}

extension RenderKernel where Change == Never {
    @_noLocks
    public mutating func apply(_ change: Never) {}
}
