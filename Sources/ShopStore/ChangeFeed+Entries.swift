import Shop

extension ChangeFeed {
    /// Publishes the entries of one committed transaction, given in log order with their events; returns
    /// once they are published. Nothing to publish when `entries` is empty.
    package func committed(_ entries: [(seq: Int64, events: [ShopEvent])]) async {
        guard let last = entries.last else { return }
        let earlier = Dictionary(entries.dropLast().map { ($0.seq, $0.events) }) { _, new in new }
        await committed(last.seq, last.events, earlier: earlier)
    }
}
