/// The JSON schema of graph files (`graphhost schema`, committed as Graphs/graph.schema.json): the graph's own keys are
/// written here; each node kind's settings come from its descriptor.
public enum GraphSchema {
    /// The schema as JSON.
    public static func json() -> JSONValue {
        // The frame is a constant of this file: it parses.
        let root = try! JSONParser.parse(frame)
        let chainKinds = NodeKinds.all.map { $0.descriptor }.filter(isEffect).map(\.typeName).sorted()
        return root.updating(path: "properties.chains.additionalProperties.items.properties.type") { _ in
            .object([("enum", .array(chainKinds.map { .string($0) }))])
        }.setting("$defs", .object([("node", nodeSchema)]))
    }

    /// The schema as the committed file holds it.
    public static var text: String { json().text() + "\n" }

    /// A kind a chain can hold: one audio input, one audio output.
    static func isEffect(_ kind: NodeDescriptor) -> Bool {
        kind.ports.filter { $0.direction == .input && $0.role == .main }.count == 1
            && kind.ports.filter { $0.direction == .output && $0.role == .main }.count == 1
    }

    /// Any node: an id, a type, and the settings of its kind.
    static var nodeSchema: JSONValue {
        let kinds = NodeKinds.all.map { $0.descriptor }
        let chain = JSONValue.object([
            (
                "if",
                .object([("properties", .object([("type", .object([("const", .string(ChainDefinitions.typeName))]))]))])
            ),
            (
                "then",
                .object([
                    ("additionalProperties", .bool(false)), ("required", .array([.string("chain")])),
                    (
                        "properties",
                        .object([
                            ("id", .bool(true)), ("type", .bool(true)),
                            (
                                "chain",
                                .object([
                                    ("type", .string("string")),
                                    (
                                        "description",
                                        .string("The name of one of the graph's chains, run in this node's place.")
                                    ),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
        ])
        return .object([
            ("type", .string("object")), ("required", .array([.string("type")])),
            (
                "properties",
                .object([
                    ("id", .object([("type", .string("string")), ("pattern", .string(#"^[^:/\s]+$"#))])),
                    (
                        "type",
                        .object([
                            ("enum", .array((kinds.map(\.typeName) + [ChainDefinitions.typeName]).map { .string($0) }))
                        ])
                    ),
                ])
            ),
            ("allOf", .array(kinds.map(kindSchema) + [chain])),
        ])
    }

    /// The settings of one kind, applied when `type` names it.
    static func kindSchema(_ kind: NodeDescriptor) -> JSONValue {
        var then: [(key: String, value: JSONValue)] = [("additionalProperties", .bool(false))]
        let required = kind.settings.filter(\.isRequired).map(\.key)
        if !required.isEmpty { then.append(("required", .array(required.map { .string($0) }))) }
        if !kind.requiresAnyOf.isEmpty {
            then.append(("anyOf", .array(kind.requiresAnyOf.map { .object([("required", .array([.string($0)]))]) })))
        }
        then.append(
            (
                "properties",
                .object(
                    [("id", .bool(true)), ("type", .bool(true))]
                        + (NodeDescriptor.commonSettings + kind.settings).map { ($0.key, settingSchema($0)) })
            ))
        return .object([
            ("if", .object([("properties", .object([("type", .object([("const", .string(kind.typeName))]))]))])),
            ("then", .object(then)),
        ])
    }

    /// One setting's schema: its JSON type with its range, allowed values, default and doc.
    static func settingSchema(_ setting: SettingDescriptor) -> JSONValue {
        func number(_ type: String) -> [(key: String, value: JSONValue)] {
            var members: [(key: String, value: JSONValue)] = [("type", .string(type))]
            if let range = setting.range {
                members += [("minimum", .number(range.lowerBound)), ("maximum", .number(range.upperBound))]
            }
            return members
        }
        func count(_ range: ClosedRange<Int>?) -> [(key: String, value: JSONValue)] {
            range.map { [("minItems", .number(Double($0.lowerBound))), ("maxItems", .number(Double($0.upperBound)))] }
                ?? []
        }
        var members: [(key: String, value: JSONValue)]
        switch setting.type {
        case .string:
            members = [("type", .string("string"))]
            if let pattern = setting.pattern { members.append(("pattern", .string(pattern))) }
            if let allowed = setting.allowed { members.append(("enum", .array(allowed.map { .string($0) }))) }
        case .boolean:
            members = [("type", .string("boolean"))]
        case .number:
            members = number("number")
        case .integer:
            members = number("integer")
        case .numbers:
            members = [("type", .string("array")), ("items", .object(number("number")))] + count(setting.itemCount)
        case .numberRows:
            members =
                [("type", .string("array"))] + count(setting.itemCount) + [
                    (
                        "items",
                        .object([
                            ("type", .string("array")), ("minItems", .number(1)), ("items", .object(number("number"))),
                        ])
                    )
                ]
        case .stringOrInteger:
            let names = setting.allowed.map { "One of: " + $0.joined(separator: ", ") + " (case-insensitive)." } ?? ""
            members = [
                (
                    "oneOf",
                    .array([
                        .object(number("integer")),
                        .object([("type", .string("string")), ("description", .string(names))]),
                    ])
                )
            ]
        case .object(let types):
            members = [
                ("type", .string("object")),
                ("additionalProperties", .object([("type", .array(types.map { .string($0) }))])),
            ]
        case .records(let fields):
            var record: [(key: String, value: JSONValue)] = [
                ("type", .string("object")), ("additionalProperties", .bool(false)),
            ]
            let required = fields.filter(\.isRequired).map(\.key)
            if !required.isEmpty { record.append(("required", .array(required.map { .string($0) }))) }
            record.append(("properties", .object(fields.map { ($0.key, settingSchema($0)) })))
            members = [("type", .string("array"))] + count(setting.itemCount) + [("items", .object(record))]
        }
        if let value = setting.defaultValue { members.append(("default", value)) }
        members.append(("description", .string(setting.doc)))
        return .object(members)
    }

    static let frame = #"""
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "$id": "https://graphhost.invalid/graph.schema.json",
          "title": "graphhost graph",
          "description": "A DSP graph for graphhost: nodes joined by links. See docs/graph-format.md.",
          "type": "object",
          "required": [
            "nodes",
            "links"
          ],
          "additionalProperties": false,
          "properties": {
            "format": {
              "type": "object",
              "additionalProperties": false,
              "properties": {
                "sampleRate": {
                  "type": "integer",
                  "minimum": 8000,
                  "maximum": 384000,
                  "default": 48000
                },
                "channels": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 8,
                  "default": 2
                },
                "maxFrames": {
                  "type": "integer",
                  "minimum": 16,
                  "maximum": 16384,
                  "default": 4096
                }
              }
            },
            "nodes": {
              "type": "array",
              "items": {
                "allOf": [
                  {
                    "$ref": "#/$defs/node"
                  }
                ],
                "required": [
                  "id"
                ]
              }
            },
            "links": {
              "type": "array",
              "items": {
                "type": "object",
                "required": [
                  "from",
                  "to"
                ],
                "additionalProperties": false,
                "properties": {
                  "from": {
                    "type": "string",
                    "pattern": "^[^:\\s]+(:[^:\\s]+)?$",
                    "description": "NODE, NODE:BUS, or NODE:PORT[,PORT…] for an lv2 node's output ports (port i on \#
        channel i; one port on every channel)."
                  },
                  "to": {
                    "type": "string",
                    "pattern": "^[^:\\s]+(:[^:\\s]+)?$",
                    "description": "NODE, NODE:BUS, or NODE:PORT[,PORT…] for an lv2 node's input ports that are not \#
        main inputs (sidechains, extra inputs; channel i to port i)."
                  },
                  "channel": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "For a link to one port: the source channel it reads (default: the channels' \#
        average)."
                  }
                }
              }
            },
            "chains": {
              "type": "object",
              "description": "Named effect chains for `chain` nodes; `chain NODE NAME` swaps while playing.",
              "propertyNames": {
                "pattern": "^[^:/\\s]+$"
              },
              "additionalProperties": {
                "type": "array",
                "items": {
                  "description": "An effect in a chain: one input, one output. `id` is optional (default: its \#
        position).",
                  "type": "object",
                  "required": [
                    "type"
                  ],
                  "properties": {
                    "type": {
                      "enum": []
                    }
                  },
                  "allOf": [
                    {
                      "$ref": "#/$defs/node"
                    }
                  ]
                }
              }
            },
            "crossfadeSeconds": {
              "type": "number",
              "minimum": 0.001,
              "maximum": 1,
              "default": 0.03,
              "description": "How long a swap to this graph (`chain`, `load`) crossfades."
            },
            "transport": {
              "type": "object",
              "additionalProperties": false,
              "description": "The musical transport plugins that follow the host receive (time:Position).",
              "properties": {
                "bpm": {
                  "type": "number",
                  "minimum": 1,
                  "maximum": 999
                },
                "beatsPerBar": {
                  "type": "number",
                  "minimum": 1,
                  "maximum": 64
                },
                "beatUnit": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 64
                },
                "rolling": {
                  "type": "boolean"
                }
              }
            },
            "baseDirectory": {
              "type": "string",
              "description": "The folder relative media paths resolve against (default: the graph file's folder); \#
        `save` writes it when it saves into another folder."
            },
            "swap": {
              "enum": [
                "crossfade",
                "spillover"
              ],
              "default": "crossfade",
              "description": "How swaps to this graph replace the running one: a crossfade, or a spillover where the \#
        old graph stops taking input and its tails ring out (to -80 dBFS or tailSeconds)."
            },
            "tailSeconds": {
              "type": "number",
              "minimum": 0.1,
              "maximum": 60,
              "default": 10,
              "description": "The longest a spillover's tails ring before they fade out."
            },
            "routes": {
              "type": "array",
              "description": "Which applications' playback streams `run` moves into which sink nodes: the first rule \#
        whose match fits a stream decides; a rule without match fits every stream.",
              "items": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                  "match": {
                    "type": "object",
                    "description": "Stream properties (application.name, media.role, application.process.binary, \#
        ...) and shell patterns their values must fit.",
                    "additionalProperties": {
                      "type": "string"
                    }
                  },
                  "to": {
                    "type": "string",
                    "description": "The id of a sink node."
                  },
                  "exclude": {
                    "type": "boolean",
                    "description": "Leave the stream where it is."
                  }
                }
              }
            },
            "midiControl": {
              "type": "object",
              "additionalProperties": false,
              "required": [
                "port"
              ],
              "description": "A MIDI input for control (GRAPHNAME.PORT): control changes move parameters, program \#
        changes select chains or presets.",
              "properties": {
                "port": {
                  "type": "string"
                },
                "cc": {
                  "type": "array",
                  "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "cc",
                      "node",
                      "param"
                    ],
                    "properties": {
                      "channel": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 16
                      },
                      "cc": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": 127
                      },
                      "node": {
                        "type": "string"
                      },
                      "param": {
                        "type": "string"
                      },
                      "min": {
                        "type": "number"
                      },
                      "max": {
                        "type": "number"
                      },
                      "curve": {
                        "enum": [
                          "linear",
                          "log",
                          "db"
                        ]
                      }
                    }
                  }
                },
                "program": {
                  "type": "array",
                  "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "program",
                      "node"
                    ],
                    "properties": {
                      "channel": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 16
                      },
                      "program": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": 127
                      },
                      "node": {
                        "type": "string"
                      },
                      "chain": {
                        "type": "string"
                      },
                      "preset": {
                        "type": "string"
                      }
                    }
                  }
                }
              }
            }
          }
        }
        """#
}
