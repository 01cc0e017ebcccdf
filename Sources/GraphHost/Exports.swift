// The render world and the EQ math are part of the library's interface.
@_exported import GraphHostCore
@_exported import GraphHostDSP
