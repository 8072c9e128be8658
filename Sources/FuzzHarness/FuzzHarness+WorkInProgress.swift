import JSON

extension FuzzHarness {
    /// Paths in a ViewModel state that show a load or a submission under way (`phase: "loading"`,
    /// `submitPhase: "submitting"`, `isLoadingMore: true`, ...).
    nonisolated static func workShownInProgress(_ state: JSONValue, path: String = "") -> [String] {
        switch state {
        case .object(let members):
            return members.keys.sorted().flatMap { key -> [String] in
                let value = members[key]!
                let here = "\(path)/\(key)"
                if key.lowercased().hasSuffix("phase"), value == "loading" || value == "submitting" {
                    return ["\(here) = \(value)"]
                }
                if key.hasPrefix("isLoading"), value == true { return ["\(here) = true"] }
                return workShownInProgress(value, path: here)
            }
        case .array(let elements):
            return elements.indices.flatMap { workShownInProgress(elements[$0], path: "\(path)/\($0)") }
        default:
            return []
        }
    }
}
