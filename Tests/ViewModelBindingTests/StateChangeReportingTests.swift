import JSON
import JSONPatch
import Observation
import Testing
@testable import ViewModelBinding

/// A value that Observation cannot see (not `@Observable`).
@MainActor
final class UnobservedCount {
    var value = 0
}

/// A screen whose state reads an unobserved count and an observed one, and reports changes itself.
@MainActor @Observable
final class ReportingViewModel: ScreenViewModel, StateChangeReporting {
    struct State: Codable, Equatable {
        var unobserved: Int
        var observed: Int
    }

    @ObservationIgnored let unobserved: UnobservedCount
    /// Changed with a report, or (``changeWithoutReport()``) without one.
    private(set) var observed = 0
    @ObservationIgnored var stateDidChange: (@MainActor () -> Void)?

    init(unobserved: UnobservedCount) {
        self.unobserved = unobserved
    }

    var state: State { State(unobserved: unobserved.value, observed: observed) }

    func changeUnobserved(to value: Int, reporting: Bool) {
        unobserved.value = value
        if reporting { stateDidChange?() }
    }

    func changeObserved() {
        observed += 1
        stateDidChange?()
    }

    func changeWithoutReport() {
        observed += 1
    }

    func appear() {}
    func close() {}
}

/// ViewModels that report their changes (``StateChangeReporting``): their reports, not Observation, send
/// their state; debug builds check that no change went unreported.
@MainActor @Suite struct StateChangeReportingTests {
    static func harness(_ unobserved: UnobservedCount) -> Harness {
        Harness(definitions: [ViewModelDefinition<Void>.screen("reporting", actions: []) { ReportingViewModel(unobserved: unobserved) }])
    }

    @Test func aReportSendsAChangeThatObservationCannotSee() throws {
        let unobserved = UnobservedCount()
        let harness = Self.harness(unobserved)
        harness.send(1, "viewModel/open", ["type": "reporting"])
        var mirror = try #require(harness.takeMessages().first?["result"]?["state"])
        let model = try #require(harness.host.openModel("v1") as? ReportingViewModel)

        // Not reported: not sent (nothing observed it either).
        model.changeUnobserved(to: 5, reporting: false)
        harness.host.flushDirty(force: true)
        #expect(harness.takeMessages().isEmpty)

        // Reported: sent, with the change made before too.
        model.changeUnobserved(to: 7, reporting: true)
        harness.host.flushDirty(force: true)
        let changed = harness.takeMessages()
        #expect(changed.count == 1)
        let patch = try JSONPatch(json: try #require(changed.first?["params"]?["patch"]))
        mirror = try patch.apply(to: mirror)
        #expect(mirror == ["unobserved": 7, "observed": 0])
        #expect(changed.first?["params"]?["version"] == 2)

        model.changeObserved()
        harness.host.flushDirty(force: true)
        let next = harness.takeMessages()
        mirror = try JSONPatch(json: try #require(next.first?["params"]?["patch"])).apply(to: mirror)
        #expect(mirror == ["unobserved": 7, "observed": 1])
    }

    #if DEBUG
    @Test func debugBuildsStopAtAReadAfterAnObservedChangeThatWasNotReported() async {
        await #expect(processExitsWith: .failure) {
            await MainActor.run {
                let harness = StateChangeReportingTests.harness(UnobservedCount())
                harness.send(1, "viewModel/open", ["type": "reporting"])
                let model = harness.host.openModel("v1") as! ReportingViewModel
                model.changeWithoutReport()
                harness.host.flushDirty(force: true)
            }
        }
    }
    #endif
}
