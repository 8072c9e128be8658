#if canImport(Glibc)
import Glibc
#endif

/// Runs every job of Swift's global executor on the main queue instead of the cooperative thread pool.
///
/// The harness drains the main queue itself; with this, the only work it cannot see is the store's
/// own queue, which ``ServiceCallCounter`` covers. So "main queue empty and no service call under way"
/// means that nothing is left to happen, and one input runs the same way every time (the order of
/// jobs no longer depends on thread scheduling). It installs `swift_task_enqueueGlobal_hook`, the
/// runtime's hook for this (as Point-Free's `withMainSerialExecutor` does), for the whole process:
/// install it only in a process that does nothing but run the harness.
enum MainQueueExecutor {
    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// Installs the hook (once; later calls do nothing).
    @MainActor
    static func install() {
        _ = installed
    }

    @MainActor
    private static let installed: Void = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            fatalError("swift_task_enqueueGlobal_hook is not exported by this Swift runtime")
        }
        symbol.assumingMemoryBound(to: Hook?.self).pointee = { job, _ in
            MainActor.shared.enqueue(job)
        }
    }()
}
