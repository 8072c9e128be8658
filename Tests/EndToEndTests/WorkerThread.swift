import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own that runs what it is given until it is ended, as a client's worker thread
/// that starts the server and later goes away while the client process lives on.
final class WorkerThread: @unchecked Sendable {
    private var work: (() -> Void)?
    private let start = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var thread = pthread_t()
    private var ended = false

    init() throws {
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let worker = Unmanaged<WorkerThread>.fromOpaque(context!).takeRetainedValue()
            worker.loop()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<WorkerThread>.fromOpaque(context).release()
            throw ServerProcessError(description: "pthread_create failed: \(created)")
        }
    }

    /// Runs `body` on the thread and waits for it to return.
    func run(_ body: @escaping () -> Void) {
        work = body
        start.signal()
        finished.wait()
    }

    /// Lets the thread return and waits until it has.
    func end() {
        guard !ended else { return }
        ended = true
        work = nil
        start.signal()
        pthread_join(thread, nil)
    }

    private func loop() {
        while true {
            start.wait()
            guard let work else { return }
            work()
            self.work = nil
            finished.signal()
        }
    }
}
