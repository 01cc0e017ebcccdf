/// A way to reach a playing graph from outside besides the socket (OSC, MPRIS, MIDI control, PipeWire params): it
/// turns what arrives into commands for `LiveControl.perform` and listens to its events. `LiveRunner` starts
/// surfaces after the socket and the stream and stops them before either.
public protocol ControlSurface: AnyObject {
    /// Starts serving; throws a clear reason when it cannot (a port taken, no session bus).
    func start(control: LiveControl) throws
    /// Stops serving and joins its threads; called once.
    func stop()
}
