import Shop

/// Where loading some content stands. On the wire: ``PhaseName`` as `phase`, plus `error`.
public enum Phase: Equatable, Sendable {
    /// Not started (before `appear()`).
    case idle
    /// Loading; content from an earlier load may still be shown.
    case loading
    /// Loaded (possibly empty).
    case loaded
    /// The load failed; `retryable` tells whether trying again may help.
    case failed(message: String, retryable: Bool)

    /// The wire name.
    public var name: PhaseName {
        switch self {
        case .idle: .idle
        case .loading: .loading
        case .loaded: .loaded
        case .failed: .failed
        }
    }

    /// The failure, when failed.
    public var error: ErrorInfo? {
        if case .failed(let message, let retryable) = self { ErrorInfo(message: message, retryable: retryable) } else { nil }
    }

    /// A failed phase for an error.
    static func failed(_ info: ErrorInfo) -> Phase {
        .failed(message: info.message, retryable: info.retryable)
    }
}

/// A ``Phase`` on the wire.
public enum PhaseName: String, Codable, CaseIterable, Sendable {
    case idle, loading, loaded, failed
}

/// Where a submission (add to cart, checkout, create product) stands. On the wire: ``SubmitPhaseName``
/// plus an error.
public enum SubmitPhase: Equatable, Sendable {
    /// Nothing submitted yet (or reset).
    case idle
    /// Running; a second submission is refused with `alreadySubmitting`.
    case submitting
    /// The last submission succeeded.
    case succeeded
    /// The last submission failed for an operational reason.
    case failed(message: String, retryable: Bool)

    /// The wire name.
    public var name: SubmitPhaseName {
        switch self {
        case .idle: .idle
        case .submitting: .submitting
        case .succeeded: .succeeded
        case .failed: .failed
        }
    }

    /// The failure, when failed.
    public var error: ErrorInfo? {
        if case .failed(let message, let retryable) = self { ErrorInfo(message: message, retryable: retryable) } else { nil }
    }

    static func failed(_ info: ErrorInfo) -> SubmitPhase {
        .failed(message: info.message, retryable: info.retryable)
    }
}

/// A ``SubmitPhase`` on the wire.
public enum SubmitPhaseName: String, Codable, CaseIterable, Sendable {
    case idle, submitting, succeeded, failed
}

/// An error as a front end shows it: `{message, retryable}`.
public struct ErrorInfo: Codable, Equatable, Sendable {
    /// What went wrong, for people.
    public var message: String
    /// Whether trying again may help.
    public var retryable: Bool

    /// Creates an error description.
    public init(message: String, retryable: Bool) {
        self.message = message
        self.retryable = retryable
    }
}

/// Where appending the next page of a list stands, apart from the list's own ``Phase``: a failed page
/// leaves the list loaded. On the wire: ``PagingPhaseName`` as `loadMorePhase`, plus `loadMoreError`.
public enum PagingPhase: Equatable, Sendable {
    /// No page is loading, and the last one (if any) loaded.
    case idle
    /// The next page is loading.
    case loading
    /// The last page failed to load; `loadMore` tries again.
    case failed(message: String, retryable: Bool)

    /// The wire name.
    public var name: PagingPhaseName {
        switch self {
        case .idle: .idle
        case .loading: .loading
        case .failed: .failed
        }
    }

    /// The failure, when failed.
    public var error: ErrorInfo? {
        if case .failed(let message, let retryable) = self { ErrorInfo(message: message, retryable: retryable) } else { nil }
    }

    static func failed(_ info: ErrorInfo) -> PagingPhase {
        .failed(message: info.message, retryable: info.retryable)
    }
}

/// A ``PagingPhase`` on the wire.
public enum PagingPhaseName: String, Codable, CaseIterable, Sendable {
    case idle, loading, failed
}
