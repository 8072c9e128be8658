/// The value at percentile `p` (0...100) of `sorted`, by the nearest-rank method.
func percentile(_ p: Double, of sorted: [Double]) -> Double {
    precondition(!sorted.isEmpty)
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}

/// The median of `values`.
func median(_ values: [Double]) -> Double {
    percentile(50, of: values.sorted())
}

/// One line of the report.
struct Measurement {
    var name: String
    var framing: WireFraming
    var runs: Int
    var count: Int
    /// Named figures, in the order they are printed (`unit` after each value in the table).
    var figures: [(key: String, value: Double, unit: String)]
    var peakRSSKiB: Int

    /// A row of the table.
    var tableRow: String {
        let text = figures.map { "\($0.key) \(format($0.value)) \($0.unit)" }.joined(separator: ", ")
        return pad(name, 11) + pad(framing.rawValue, 8) + pad(String(runs), 6, right: true) + pad(String(count), 8, right: true)
            + "  " + pad("\(peakRSSKiB / 1024) MiB", 9) + text
    }

    static let tableHeader = pad("measurement", 11) + pad("framing", 8) + pad("runs", 6, right: true) + pad("n", 8, right: true)
        + "  " + pad("peak RSS", 9) + "figures"

    /// One JSON object on one line.
    var jsonLine: String {
        let members = [
            #""measurement":"\#(name)""#, #""framing":"\#(framing.rawValue)""#, #""runs":\#(runs)"#, #""n":\#(count)"#,
        ] + figures.map { #""\#($0.key)":\#(format($0.value))"# } + [#""peakRSSKiB":\#(peakRSSKiB)"#]
        return "{" + members.joined(separator: ",") + "}"
    }
}

/// Three significant figures at most, without exponent.
private func format(_ value: Double) -> String {
    if value >= 100 { return String(Int(value.rounded())) }
    let scaled = (value * 100).rounded() / 100
    return scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
}

private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text + " " : text + padding + " "
}
