/// Two people's typing in one text field, both kept: a three-way merge of one field's text.
///
/// `base` is the text the sender's edit started from, `mine` what they sent, `theirs` what
/// the field holds now (others' typing since `base`). Each side's change is read as one
/// splice of `base` (a range replaced by new text, as typing between two sends is), in
/// characters (grapheme clusters), never cutting one in half.
///
/// - Changes to different parts of the text are both made.
/// - Two insertions at the same place keep theirs first: it reached the room first.
/// - The same change made twice (a send repeated after a dropped connection) is made once.
/// - Changes to the same characters keep theirs, and what the sender typed goes right
///   after it: nothing anyone typed is lost, though one side's deletion may not be.
///
/// ```swift
/// TextMerge.merge(base: "Daily", mine: "Daily standup", theirs: "Team daily")
/// // "Team daily standup"
/// ```
public enum TextMerge {
  public static func merge(base: String, mine: String, theirs: String) -> String {
    if mine == theirs || theirs == base { return mine }
    if mine == base { return theirs }
    let base = Array(base)
    let my = Splice(from: base, to: Array(mine))
    let their = Splice(from: base, to: Array(theirs))
    if my == their { return theirs }
    let bothInsertHere =
      my.range.isEmpty && their.range.isEmpty
      && my.range.lowerBound == their.range.lowerBound
    if !bothInsertHere, my.range.upperBound <= their.range.lowerBound {
      return String(
        base[..<my.range.lowerBound] + my.text + base[my.range.upperBound..<their.range.lowerBound]
          + their.text + base[their.range.upperBound...])
    }
    if their.range.upperBound <= my.range.lowerBound {
      return String(
        base[..<their.range.lowerBound] + their.text
          + base[their.range.upperBound..<my.range.lowerBound] + my.text
          + base[my.range.upperBound...])
    }
    // The same characters changed on both sides: theirs, then what was typed here.
    let end = max(my.range.upperBound, their.range.upperBound)
    return String(
      base[..<their.range.lowerBound] + their.text + base[their.range.upperBound..<end] + my.text
        + base[end...])
  }

  /// One change to a text: the characters in `range` replaced by `text`.
  struct Splice: Equatable {
    var range: Range<Int>
    var text: ArraySlice<Character>

    /// The one splice that turns `old` into `new`: what lies between their common start and
    /// their common end.
    init(from old: [Character], to new: [Character]) {
      var prefix = 0
      while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
      var suffix = 0
      while suffix < old.count - prefix, suffix < new.count - prefix,
        old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
      {
        suffix += 1
      }
      range = prefix..<(old.count - suffix)
      text = new[prefix..<(new.count - suffix)]
    }
  }
}
