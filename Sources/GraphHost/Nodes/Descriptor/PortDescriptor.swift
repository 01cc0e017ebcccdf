/// One of a node's ports: what it carries, whether it is a main or a side port, its direction and name.
public struct PortDescriptor: Sendable, Equatable {
    public enum Signal: String, Sendable { case audio, event, cv }
    public enum Role: String, Sendable { case main, side }
    public enum Direction: String, Sendable { case input, output }

    public var signal: Signal
    public var role: Role
    public var direction: Direction
    public var name: String

    public init(_ signal: Signal, _ direction: Direction, role: Role = .main, name: String) {
        (self.signal, self.direction, self.role, self.name) = (signal, direction, role, name)
    }
}
