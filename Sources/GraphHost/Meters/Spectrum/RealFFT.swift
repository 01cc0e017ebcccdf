import CFFTW3
import Synchronization

/// A single-precision real-to-complex FFT of one size (FFTW's `fftwf_plan_dft_r2c_1d`) with its own aligned buffers:
/// write `input`, call `transform()`, read `output` (size/2 + 1 bins). Planning is done once, in `init`, with
/// FFTW_ESTIMATE. FFTW's planner is not thread-safe: every plan graphhost makes goes through here, made and destroyed
/// under one global lock, and the first one also turns on FFTW's own planner lock (`fftwf_make_planner_thread_safe`)
/// for LV2 plugins in the process that plan with the same library. Transforms of different instances may run on
/// different threads at once.
final class RealFFT {
    let size: Int
    let input: UnsafeMutablePointer<Float>
    let output: UnsafeMutablePointer<fftwf_complex>
    private let plan: fftwf_plan

    /// FFTW's planner and the plans' destruction; true once FFTW's own planner lock is on.
    private static let planner = Mutex(false)

    init(size: Int) {
        precondition(size >= 2 && size % 2 == 0, "RealFFT: size \(size) is not even")
        self.size = size
        input = fftwf_alloc_real(size)!
        output = fftwf_alloc_complex(size / 2 + 1)!
        input.initialize(repeating: 0, count: size)
        let (input, output) = (self.input, self.output)
        var plan: fftwf_plan?
        Self.planner.withLock { threadSafe in
            if !threadSafe {
                fftwf_make_planner_thread_safe()
                threadSafe = true
            }
            plan = fftwf_plan_dft_r2c_1d(Int32(size), input, output, UInt32(FFTW_ESTIMATE | FFTW_DESTROY_INPUT))
        }
        self.plan = plan!
    }

    deinit {
        let (plan, input, output) = (self.plan, self.input, self.output)
        Self.planner.withLock { _ in
            fftwf_destroy_plan(plan)
            fftwf_free(input)
            fftwf_free(output)
        }
    }

    /// Transforms `input` into `output`; `input` is left undefined.
    func transform() { fftwf_execute(plan) }

    /// |output[bin]|².
    func power(_ bin: Int) -> Float {
        let (re, im) = output[bin]
        return re * re + im * im
    }
}
