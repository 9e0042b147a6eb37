import CasePaths
import StoreRuntime
import Testing

/// A child in one case of an enum of destinations (`Scope` over a case, `ifLet` over the
/// optional enum), and `onChange`, as in TCA.
struct DestinationTests {
  struct Counter: Reducer {
    typealias State = Int
    enum Action: Equatable, Sendable { case increment, tooMany }
    var body: some ReducerOf<Self> {
      Reduce { state, action in
        switch action {
        case .increment:
          state += 1
          return .none
        case .tooMany:
          return .reject(.invalidValue("Too many."))
        }
      }
    }
  }

  struct Screen: Reducer {
    struct State: Equatable, Sendable {
      var destination: Destination.State?
      var changes: [String] = []
    }
    @CasePathable
    enum Action: Equatable, Sendable {
      case destination(PresentationAction<Destination.Action>)
      case showAlert
      case showCounter
    }

    struct Destination: Reducer {
      @CasePathable @dynamicMemberLookup
      enum State: Equatable, Sendable {
        case counter(Int)
        case alert
      }
      @CasePathable
      enum Action: Equatable, Sendable {
        case counter(Counter.Action)
      }
      var body: some ReducerOf<Self> {
        Scope(state: \.counter, action: \.counter, absentMessage: "No counter is showing.") {
          Counter()
        }
      }
    }

    @Sendable static func nothingShowing(_: Destination.Action) -> String { "Nothing is showing." }

    var body: some ReducerOf<Self> {
      Reduce { state, action in
        switch action {
        case .showAlert: state.destination = .alert
        case .showCounter: state.destination = .counter(0)
        case .destination: break
        }
        return .none
      }
      .ifLet(\.destination, action: \.destination, absentMessage: Self.nothingShowing) {
        Destination()
      }
      .onChange(of: \.destination?.counter) { old, new in
        Reduce { state, _ in
          state.changes.append(
            "\(old.map(String.init) ?? "nil") → \(new.map(String.init) ?? "nil")")
          return .none
        }
      }
    }
  }

  @Test func aChildInOneCaseRunsThereAndIsRefusedElsewhere() {
    let screen = Screen().core
    var state = Screen.State()
    // Nothing presented: the optional's message.
    #expect(
      screen.reduce(into: &state, action: .destination(.presented(.counter(.increment))))
        .rejection == .invalidAction("Nothing is showing."))
    _ = screen.reduce(into: &state, action: .showCounter)
    _ = screen.reduce(into: &state, action: .destination(.presented(.counter(.increment))))
    _ = screen.reduce(into: &state, action: .destination(.presented(.counter(.increment))))
    #expect(state.destination == .counter(2))
    // The child's own refusal reaches the parent, and nothing changed.
    #expect(
      screen.reduce(into: &state, action: .destination(.presented(.counter(.tooMany))))
        .rejection == .invalidValue("Too many."))
    #expect(state.destination == .counter(2))
    // Another case is showing: the case's message, and the alert stays.
    _ = screen.reduce(into: &state, action: .showAlert)
    #expect(
      screen.reduce(into: &state, action: .destination(.presented(.counter(.increment))))
        .rejection == .invalidAction("No counter is showing."))
    #expect(state.destination == .alert)
    // onChange saw each change of the counter, and nothing else.
    #expect(state.changes == ["nil → 0", "0 → 1", "1 → 2", "2 → nil"])
  }

  @Test func dismissingClearsTheDestination() {
    let screen = Screen().core
    var state = Screen.State(destination: .counter(3))
    _ = screen.reduce(into: &state, action: .destination(.dismiss))
    #expect(state.destination == nil)
    #expect(state.changes == ["3 → nil"])
  }
}
