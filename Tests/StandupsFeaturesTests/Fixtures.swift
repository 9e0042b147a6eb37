import Foundation
import IdentifiedCollections
import StandupsFeatures

extension UUID {
  /// `00000000-0000-0000-0000-00000000000n`, as `.incrementing` makes them.
  init(_ n: Int) { self.init(uuidString: String(format: "00000000-0000-0000-0000-%012x", n))! }
}

extension Standup {
  static func mock(attendees count: Int = 3, minutes: Int = 1) -> Standup {
    Standup(
      id: UUID(1000),
      attendees: IdentifiedArray(
        uniqueElements: (0..<count).map { Attendee(id: UUID(2000 + $0), name: "Person \($0 + 1)") }),
      duration: .seconds(minutes * 60), theme: .orange, title: "Design")
  }
}
