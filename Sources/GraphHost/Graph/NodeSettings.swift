/// Typed access to one JSON object's fields that reports wrong types and unknown keys with their paths.
public struct NodeSettings {
    public let object: JSONValue
    public let path: String

    public init(object: JSONValue, path: String) {
        self.object = object
        self.path = path
    }

    public func path(_ key: String) -> String { "\(path).\(key)" }

    /// Reports keys other than `allowed`.
    public func rejectUnknownKeys(_ allowed: [String], issues: inout GraphIssues) {
        for (key, value) in object.objectMembers ?? [] where !allowed.contains(key) {
            issues.report(
                path(key), "unknown setting '\(key)'; valid settings: \(allowed.joined(separator: ", "))", at: value)
        }
    }

    /// The members of the object setting `key` with their paths: [] when it is absent, nil (reported) when it is not
    /// an object of `shape` (e.g. "SYMBOL: number").
    public func members(_ key: String, shape: String, issues: inout GraphIssues) -> [(
        path: String, name: String, value: JSONValue
    )]? {
        guard let given = object[key] else { return [] }
        guard let members = given.objectMembers else {
            issues.report(path(key), "expected an object of \(shape), found \(given.typeName)", at: given)
            return nil
        }
        return members.map { ("\(path(key)).\($0.key)", $0.key, $0.value) }
    }

    public func string(_ key: String, issues: inout GraphIssues) -> String? {
        guard let v = object[key] else { return nil }
        guard let s = v.stringValue else {
            issues.report(path(key), "expected a string, found \(v.typeName)", at: v)
            return nil
        }
        return s
    }

    public func number(_ key: String, in range: ClosedRange<Double>? = nil, issues: inout GraphIssues) -> Double? {
        guard let v = object[key] else { return nil }
        guard let n = v.numberValue else {
            issues.report(path(key), "expected a number, found \(v.typeName)", at: v)
            return nil
        }
        if let range, !range.contains(n) {
            issues.report(
                path(key),
                "\(Format.number(n)) is out of range "
                    + "\(Format.number(range.lowerBound))…\(Format.number(range.upperBound))",
                at: v)
            return nil
        }
        return n
    }

    public func integer(_ key: String, in range: ClosedRange<Int>, issues: inout GraphIssues) -> Int? {
        guard let v = object[key] else { return nil }
        let n = v.numberValue ?? .nan
        let found = n.isNaN ? v.typeName : Format.number(n)
        guard n == n.rounded(), abs(n) < 1e15 else {
            issues.report(path(key), "expected a whole number, found \(found)", at: v)
            return nil
        }
        let i = Int(n)
        guard range.contains(i) else {
            issues.report(path(key), "\(i) is out of range \(range.lowerBound)…\(range.upperBound)", at: v)
            return nil
        }
        return i
    }

    public func bool(_ key: String, issues: inout GraphIssues) -> Bool? {
        guard let v = object[key] else { return nil }
        guard let b = v.boolValue else {
            issues.report(path(key), "expected true or false, found \(v.typeName)", at: v)
            return nil
        }
        return b
    }

    public func numbers(_ key: String, in range: ClosedRange<Double>, issues: inout GraphIssues) -> [Double]? {
        guard let v = object[key] else { return nil }
        guard let items = v.arrayValue else {
            issues.report(path(key), "expected an array of numbers, found \(v.typeName)", at: v)
            return nil
        }
        var result: [Double] = []
        for (i, item) in items.enumerated() {
            guard let n = item.numberValue else {
                issues.report("\(path(key))[\(i)]", "expected a number, found \(item.typeName)", at: item)
                return nil
            }
            guard range.contains(n) else {
                issues.report(
                    "\(path(key))[\(i)]",
                    "\(Format.number(n)) is out of range "
                        + "\(Format.number(range.lowerBound))…\(Format.number(range.upperBound))",
                    at: item)
                return nil
            }
            result.append(n)
        }
        return result
    }
}

extension NodeSettings {
    /// A setting as its descriptor says: its key, with its range.
    public func string(_ setting: SettingDescriptor, issues: inout GraphIssues) -> String? {
        string(setting.key, issues: &issues)
    }
    public func bool(_ setting: SettingDescriptor, issues: inout GraphIssues) -> Bool? {
        bool(setting.key, issues: &issues)
    }
    public func number(_ setting: SettingDescriptor, issues: inout GraphIssues) -> Double? {
        number(setting.key, in: setting.range, issues: &issues)
    }
    public func integer(_ setting: SettingDescriptor, issues: inout GraphIssues) -> Int? {
        integer(setting.key, in: setting.integerRange, issues: &issues)
    }
    public func numbers(_ setting: SettingDescriptor, issues: inout GraphIssues) -> [Double]? {
        numbers(setting.key, in: setting.range ?? -Double.infinity...Double.infinity, issues: &issues)
    }
}
