/// The version reported by `--version` and in `serverInfo`.
public enum StorefrontVersion {
    /// The server's version.
    public static let current = "0.1.0"
    /// The wire protocol's version (`protocolVersion` in the `initialize` result).
    public static let protocolVersion = "2026-11-21"
}
