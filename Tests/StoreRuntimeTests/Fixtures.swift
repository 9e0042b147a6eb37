import CasePaths
import Clocks
import Dependencies
import StoreRuntime

/// A ticking child, presented by `Parent`.
struct Ticker: Reducer {
  struct State: Equatable, Identifiable, Sendable {
    var id: Int
    var ticks = 0
  }
  @CasePathable
  enum Action: Equatable, Sendable {
    case started
    case tick
    case doneButtonTapped
    /// Changes the state, then refuses: the store must keep the state as it was.
    case tickTooFar
  }
  enum CancelID { case timer }
  @Dependency(\.continuousClock) var clock
  @Dependency(\.dismiss) var dismiss

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .started:
        return .run { [clock] send in
          for await _ in clock.timer(interval: .seconds(1)) { await send(.tick) }
        }
        .cancellable(id: CancelID.timer, cancelInFlight: true)
      case .tick:
        state.ticks += 1
        return .none
      case .doneButtonTapped:
        return .run { _ in await self.dismiss() }
      case .tickTooFar:
        state.ticks += 100
        return .reject(.invalidValue("That is too far."))
      }
    }
  }
}

struct Parent: Reducer {
  struct State: Equatable, Sendable {
    var ticker: Ticker.State?
    var presentations = 0
  }
  @CasePathable
  enum Action: Equatable, Sendable {
    case showButtonTapped
    case hideButtonTapped
    case ticker(PresentationAction<Ticker.Action>)
  }

  /// Whether `ifLet` is given a `CaseKeyPath` value rather than the macro's `\.ticker`.
  var throughCaseKeyPath = false
  static var toTicker: CaseKeyPath<Action, PresentationAction<Ticker.Action>> { \.ticker }

  var body: some ReducerOf<Self> {
    if throughCaseKeyPath {
      base.ifLet(\.ticker, action: Self.toTicker, absentMessage: "No ticker is showing.") {
        Ticker()
      }
    } else {
      base.ifLet(\.ticker, action: \.ticker, absentMessage: "No ticker is showing.") {
        Ticker()
      }
    }
  }

  private var base: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .showButtonTapped:
        state.presentations += 1
        state.ticker = Ticker.State(id: state.presentations)
        return .send(.ticker(.presented(.started)))
      case .hideButtonTapped:
        state.ticker = nil
        return .none
      case .ticker:
        return .none
      }
    }
  }
}

/// A form with one bindable field, validated after the binding is applied.
struct Form: Reducer {
  struct State: Equatable, Sendable {
    @BindingState var title = ""
    var notBindable = 0
  }
  @CasePathable
  enum Action: Equatable, Sendable {
    case binding(BindingAction<State>)
  }

  var body: some ReducerOf<Self> {
    BindingReducer(action: \.binding)
    Reduce { state, action in
      switch action {
      case .binding(\.$title):
        return state.title.count > 5 ? .reject(.invalidValue("At most 5 characters.")) : .none
      case .binding:
        return .none
      }
    }
  }
}
