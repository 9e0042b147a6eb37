import StoreRuntime
import Testing

/// `if`, `if`/`else` and `switch` inside a reducer's body, as in TCA.
struct ReducerBuilderTests {
  struct Counter: Reducer {
    enum Mode: Sendable { case plain, doubling, capped }
    var logs: Bool
    var mode: Mode

    var body: some ReducerOf<Self> {
      Reduce { state, _ in
        state.append("counted")
        return .none
      }
      if logs {
        Reduce { state, _ in
          state.append("logged")
          return .none
        }
      }
      switch mode {
      case .plain:
        EmptyReducer()
      case .doubling:
        Reduce { state, _ in
          state.append("doubled")
          return .none
        }
      case .capped:
        Reduce { state, _ in .reject(.invalidAction("Capped.")) }
      }
    }

    typealias State = [String]
    typealias Action = Int
  }

  @Test func optionalAndEitherReducersRunWhatTheirConditionsChose() {
    var state: [String] = []
    _ = Counter(logs: true, mode: .doubling).reduce(into: &state, action: 1)
    #expect(state == ["counted", "logged", "doubled"])
    state = []
    _ = Counter(logs: false, mode: .plain).reduce(into: &state, action: 1)
    #expect(state == ["counted"])
    state = []
    let effect = Counter(logs: false, mode: .capped).reduce(into: &state, action: 1)
    #expect(effect.rejection == .invalidAction("Capped."))
  }
}
