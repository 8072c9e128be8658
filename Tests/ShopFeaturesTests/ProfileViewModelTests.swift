import Foundation
import Shop
import TestWaits
import Testing
@_spi(Testing) @testable import ShopFeatures

@Suite @MainActor struct ProfileViewModelTests {
    let accounts = AccountServiceDouble()
    let events = ShopEvents()

    func appeared() async throws -> (ProfileViewModel, ShopSession) {
        let session = ShopSession.signedInForTests(events: events, accounts: accounts)
        accounts.account.returns(Fixture.account)
        let viewModel = try ProfileViewModel(accounts: accounts, events: events, session: session)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return (viewModel, session)
    }

    @Test func aGuestCannotOpenAProfile() {
        let session = ShopSession(accounts: accounts, events: events, clock: ContinuousClock(), makeGuestId: { "guest-1" })
        #expect(throws: ShopError.signInRequired("see your profile")) {
            try ProfileViewModel(accounts: accounts, events: events, session: session)
        }
    }

    @Test func loadsTheAccountAndSavesTheFieldsTheUserChanged() async throws {
        let (viewModel, _) = try await appeared()
        #expect(viewModel.state == ProfileState(
            phase: .loaded, error: nil, accountId: 1, fields: ProfileFields(Fixture.account), errors: [:], isValid: true,
            hasChanges: false, savePhase: .idle))
        try viewModel.setField(.name, "Ann Smith")
        try viewModel.setField(.bio, "Reads.")
        try viewModel.setNotificationsEnabled(false)
        #expect(viewModel.state.hasChanges)
        var saved = Fixture.account
        saved.name = "Ann Smith"
        saved.bio = "Reads."
        saved.notificationsEnabled = false
        accounts.updateProfile.returns(saved)
        try await viewModel.save()
        #expect(accounts.updateProfile.calls == [.init(accountId: 1, update: ProfileUpdate(
            name: "Ann Smith", bio: "Reads.", notificationsEnabled: false))])
        #expect(viewModel.state == ProfileState(
            phase: .loaded, error: nil, accountId: 1, fields: ProfileFields(saved), errors: [:], isValid: true,
            hasChanges: false, savePhase: .succeeded))
    }

    @Test func anInvalidDraftIsRefusedWithEveryErrorShown() async throws {
        let (viewModel, _) = try await appeared()
        try viewModel.setField(.bio, String(repeating: "b", count: 501))
        #expect(viewModel.state.errors == ["bio": "Bio must be at most 500 characters."])
        try viewModel.setField(.name, "  ")
        let error = await #expect(throws: ShopError.self) { try await viewModel.save() }
        #expect(error?.reason == "validationFailed")
        #expect(viewModel.state.errors == ["bio": "Bio must be at most 500 characters.", "name": "Name is required."])
        #expect(!viewModel.state.isValid)
        #expect(accounts.updateProfile.calls.isEmpty)
    }

    @Test func aTakenEmailBecomesTheEmailFieldsError() async throws {
        let (viewModel, _) = try await appeared()
        try viewModel.setField(.email, "bob@example.com")
        accounts.updateProfile.fails(ShopError.emailTaken("bob@example.com"))
        await #expect(throws: ShopError.emailTaken("bob@example.com")) { try await viewModel.save() }
        #expect(viewModel.state.errors == ["email": "Another account has this email."])
        #expect(viewModel.state.savePhase == .idle)
    }

    @Test func aSaveElsewhereShowsInTheFieldsTheUserHasNotChangedAndTheEditedOnesKeepTheirDraft() async throws {
        let (viewModel, _) = try await appeared()
        var renamed = Fixture.account
        renamed.name = "Ann Smith"
        events.publish(.accountChanged(renamed))
        #expect(viewModel.state.fields == ProfileFields(renamed))
        #expect(!viewModel.state.hasChanges)

        try viewModel.setField(.bio, "Draft")
        renamed.name = "A. Smith"
        renamed.bio = "Reads."
        renamed.notificationsEnabled = false
        events.publish(.accountChanged(renamed))
        var expected = ProfileFields(renamed)
        expected.bio = "Draft"  // the field the user changed stays theirs
        #expect(viewModel.state.fields == expected)
        #expect(viewModel.saved == renamed)
        try viewModel.discardChanges()
        #expect(viewModel.state.fields == ProfileFields(renamed))
    }

    @Test func aSaveSendsOnlyTheChangedFieldsAndShowsTheProfileAsStored() async throws {
        let (viewModel, _) = try await appeared()
        try viewModel.setField(.name, "  Ann Smith ")
        try viewModel.setField(.email, "ann@example.com ")  // the stored email once trimmed: unchanged
        var stored = Fixture.account
        stored.name = "Ann Smith"
        stored.bio = "Saved by another screen meanwhile."
        stored.notificationsEnabled = false
        accounts.updateProfile.returns(stored)

        try await viewModel.save()

        #expect(accounts.updateProfile.calls == [.init(accountId: 1, update: ProfileUpdate(name: "Ann Smith"))])
        #expect(viewModel.state == ProfileState(
            phase: .loaded, error: nil, accountId: 1, fields: ProfileFields(stored), errors: [:], isValid: true,
            hasChanges: false, savePhase: .succeeded))
    }

    @Test func aSaveAfterAnotherServersSaveShowedDoesNotSendItsValuesBack() async throws {
        let (viewModel, _) = try await appeared()
        try viewModel.setField(.name, "Ann Smith")
        var elsewhere = Fixture.account
        elsewhere.bio = "Reads."
        elsewhere.notificationsEnabled = false
        events.publish(.accountChanged(elsewhere))
        var stored = elsewhere
        stored.name = "Ann Smith"
        accounts.updateProfile.returns(stored)

        try await viewModel.save()

        #expect(accounts.updateProfile.calls == [.init(accountId: 1, update: ProfileUpdate(name: "Ann Smith"))])
        #expect(viewModel.state.fields == ProfileFields(stored))
    }

    @Test func savingWithNothingChangedSendsNoFieldAndShowsTheProfileAsStored() async throws {
        let (viewModel, _) = try await appeared()
        var stored = Fixture.account
        stored.bio = "Saved by another screen meanwhile."
        accounts.updateProfile.returns(stored)

        try await viewModel.save()

        #expect(accounts.updateProfile.calls == [.init(accountId: 1, update: ProfileUpdate())])
        #expect(viewModel.state == ProfileState(
            phase: .loaded, error: nil, accountId: 1, fields: ProfileFields(stored), errors: [:], isValid: true,
            hasChanges: false, savePhase: .succeeded))
    }

    @Test func signingOutFailsTheScreenWithASignInMessage() async throws {
        let (viewModel, session) = try await appeared()
        accounts.signOut.returns(())
        try await session.signOut()
        await settle { viewModel.phase != .loaded && viewModel.phase != .loading }
        #expect(viewModel.state.phase == .failed)
        #expect(viewModel.state.error == ErrorInfo(message: "Sign in to see your profile.", retryable: false))
        #expect(viewModel.state.accountId == nil)
        #expect(throws: ShopError.signInRequired("edit your profile")) { try viewModel.setField(.name, "X") }
    }
}
