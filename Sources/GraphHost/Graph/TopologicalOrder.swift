/// The render order.
extension GraphDocument {
    /// Kahn's algorithm, stable in file order; a cycle is reported with its nodes.
    static func topologicalOrder(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) -> [Int] {
        var indegree = Array(repeating: 0, count: nodes.count)
        for l in links { indegree[l.to] += 1 }
        var order: [Int] = []
        var ready = (0..<nodes.count).filter { indegree[$0] == 0 }
        while !ready.isEmpty {
            let n = ready.removeFirst()
            order.append(n)
            for l in links where l.from == n {
                indegree[l.to] -= 1
                if indegree[l.to] == 0 {
                    ready.append(l.to)
                    ready.sort()
                }
            }
        }
        if order.count < nodes.count {
            // Walk backwards along links among the remaining nodes until a node repeats.
            let remaining = Set((0..<nodes.count).filter { !order.contains($0) })
            var path: [Int] = [remaining.min()!]
            while true {
                let next = links.first { $0.to == path.last! && remaining.contains($0.from) }!.from
                if let start = path.firstIndex(of: next) {
                    var cycle = Array(path[start...].reversed())
                    let first = cycle.firstIndex(of: cycle.min()!)!
                    cycle = Array(cycle[first...] + cycle[..<first])
                    let names = (cycle + [cycle[0]]).map { nodes[$0].id }.joined(separator: " → ")
                    issues.report("links", "the links form a cycle: \(names)")
                    break
                }
                path.append(next)
            }
        }
        return order
    }
}
