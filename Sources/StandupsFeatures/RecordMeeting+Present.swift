import Foundation

/// Who was there: a meeting's `present`, kept by name and, where people sign in, by sign-in.
extension RecordMeeting.State {
  /// `participant` is in the room while the meeting runs (with the others `here`): in
  /// `present`, by the name they go by (and by their sign-in, when they have one).
  ///
  /// A sign-in new under a name takes the place of one that name had that is gone from the room:
  /// someone whose session ended (a rotated invite) or who signed out and in again is one
  /// person, not one a sign-in; sign-ins there under one name at once are as many people.
  mutating func notePresent(_ participant: Participant, here: some Sequence<Participant>) {
    let name = participant.shownName
    if !present.contains(name) {
      present.append(name)
    } else if participant.person != nil, presentBy[name] == nil {
      // NB: present from before the room opened again: who was is not known ("").
      presentBy[name] = [""]
    }
    guard let person = participant.person, presentBy[name]?.contains(person) != true else {
      return
    }
    let inRoom = Set(here.compactMap(\.person))
    // NB: the least, so that which one goes does not depend on a set's order.
    if let gone = presentBy[name]?.filter({ !$0.isEmpty && !inRoom.contains($0) }).min() {
      presentBy[name]?.remove(gone)
      // NB: and the notes it gave ids to are this sign-in's: sent again, each is taken once.
      for (id, senders) in noteSenders where senders.contains(gone) {
        noteSenders[id]?.insert(person)
      }
    }
    presentBy[name, default: []].insert(person)
  }

  /// Someone who renamed themselves during the meeting (one sign-in, `person`, back under
  /// another name): its "present" shows them once, by the name they go by now. A former name
  /// is one only this sign-in was there under (not someone else's too, nor one present from
  /// before the room opened again, whose people are not known).
  mutating func renameInPresent(_ joining: Participant) {
    guard let person = joining.person else { return }
    let name = joining.shownName
    // NB: a name others were there under too stays, theirs alone: under two names, this
    // sign-in would count under neither (`presentPeople`).
    for shared in present where shared != name {
      if let signIns = presentBy[shared], signIns.contains(person), signIns != [person] {
        presentBy[shared]?.remove(person)
      }
    }
    let former = present.filter { $0 != name && presentBy[$0] == [person] }
    guard let first = former.first, let index = present.firstIndex(of: first) else { return }
    if present.contains(name) {
      present.remove(at: index)
    } else {
      present[index] = name
    }
    for old in former {
      presentBy[old] = nil
      if old != first { present.removeAll { $0 == old } }
    }
    presentBy[name, default: []].insert(person)
  }

  /// `present` as a saved meeting lists it: a name once for each sign-in that went by that
  /// name alone (two people who both chose "Alex" were two people), and once where who was
  /// there is not known (bots, an open server's people, a name from before the room opened
  /// again).
  public var presentPeople: [String] {
    present.flatMap { name in
      let elsewhere = presentBy.reduce(into: Set<String>()) { signIns, entry in
        if entry.key != name { signIns.formUnion(entry.value) }
      }
      let only = (presentBy[name] ?? []).subtracting(elsewhere).subtracting([""])
      return Array(repeating: name, count: max(1, only.count))
    }
  }
}
