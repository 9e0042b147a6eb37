import Foundation
import StandupsFeatures
import Testing

struct StandupListTests {
  let a = Standup(id: UUID(1), title: "A")
  let b = Standup(id: UUID(2), title: "B")
  let c = Standup(id: UUID(3), title: "C")

  @Test func keepsCreationOrderWhateverChanges() {
    var list: StandupList = [a, b]
    list.append(c)
    #expect(list.map(\.title) == ["A", "B", "C"])
    #expect(list.ids == [a.id, b.id, c.id])
    // A change keeps the standup's place; setting an id that is not here appends.
    list[id: a.id]?.title = "A, renamed"
    list[1].title = "B, renamed"
    #expect(list.map(\.title) == ["A, renamed", "B, renamed", "C"])
    list.remove(id: b.id)
    #expect(list.map(\.title) == ["A, renamed", "C"])
    #expect(list.index(id: c.id) == 1)
    #expect(list.index(id: b.id) == nil)
    list[id: b.id] = b
    #expect(list.map(\.title) == ["A, renamed", "C", "B"])
    list[id: c.id] = nil
    #expect(list.ids == [a.id, b.id])
    list.removeAll { $0.title.hasPrefix("A") }
    #expect(Array(list) == [b])
    #expect(list.last == b && list.count == 1)
  }

  @Test func aRepeatedIdKeepsItsFirstPlaceAndItsLastValue() {
    var again = a
    again.title = "A again"
    let list = StandupList([a, b, again])
    #expect(list.map(\.title) == ["A again", "B"])
  }

  @Test func aCopyIsAValueAndEqualityIsByOrderAndContent() {
    let original: StandupList = [a, b, c]
    var copy = original
    copy[id: b.id]?.title = "changed"
    #expect(original[id: b.id]?.title == "B")
    #expect(copy != original)
    copy[id: b.id]?.title = "B"
    #expect(copy == original)
    #expect(StandupList([b, a, c]) != original)
  }
}
