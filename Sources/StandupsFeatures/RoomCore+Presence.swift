import IdentifiedCollections
import StoreRuntime

/// Who is in the room: people and bots coming and going, and what that does to a meeting.
extension RoomCore {
  func join(_ participant: Participant, into state: inout State) -> Effect<Action> {
    state.meeting?.renameInPresent(participant)
    state.participants.append(participant)
    state.meeting?.notePresent(participant, here: state.participants)
    // NB: a bot is not somebody back: its joining goes on with no meeting.
    guard !participant.isBot, state.meeting?.emptiedAt != nil else { return .none }
    return .send(.meeting(.presented(.someoneReturned)))
  }

  func leave(_ id: Participant.ID, from state: inout State) -> Effect<Action> {
    let leaving = state.participants.remove(id: id)
    if state.participants.isEmpty {
      // The room emptied: an alert closes (nobody is there to answer it) — but for one
      // asked for from outside (its sender answers it) —, a draft stays open for whoever
      // comes back (it is saved).
      if case .alert = state.destination, !state.alertAskedFromOutside {
        closeDestination(&state)
      }
      // Nobody is left to undo: a deletion waiting for its window is carried out.
      if state.undo?.restore == .deletion { state.isDeleted = true }
      state.undo = nil
    }
    // The last person left (bots, if any, do not hold a meeting): the clock stops until
    // someone resumes; a meeting only bots were in stops when the last of them leaves.
    guard let meeting = state.meeting, !state.participants.contains(where: { !$0.isBot }),
      leaving?.isBot == false || (state.participants.isEmpty && !meeting.isPaused)
    else { return .none }
    return .send(.meeting(.presented(.roomEmptied)))
  }
}
