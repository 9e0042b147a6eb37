/// Two people's typing in one text field, both kept: a three-way merge of one field's text.
///
/// `base` is the text the sender's edit started from, `mine` what they sent, `theirs` what
/// the field holds now (others' typing since `base`). Each side's changes to `base` are found
/// by a character diff (characters as people see them: grapheme clusters, never half of
/// one), as hunks: ranges of `base` replaced by new text.
///
/// - Hunks that touch different characters are all made.
/// - Where hunks of both sides touch the same characters, or insert at the same place:
///   the same change on both sides is made once; otherwise a character either side took
///   out is out, and the text each side put in stays where it put it, theirs first (it
///   reached the room first) where both put text at one place. Nothing anyone typed is
///   lost, and no deletion is undone.
///
/// ```swift
/// TextMerge.merge(base: "Daily", mine: "Daily standup", theirs: "Team daily")
/// // "Team daily standup"
/// ```
///
/// `public/js/textmerge.mjs` is the same merge, step for step, for the web app.
public enum TextMerge {
  /// Texts longer than this are not merged: the sender's text is taken as it is.
  public static let maxLength = 1000

  public static func merge(base: String, mine: String, theirs: String) -> String {
    if mine == theirs || theirs == base { return mine }
    if mine == base { return theirs }
    // NB: the diff takes time and memory in the product of the lengths; the fields merged
    // hold 100 characters at most, so longer text (refused anyway) is not merged.
    guard base.count <= maxLength, mine.count <= maxLength, theirs.count <= maxLength else {
      return mine
    }
    let base = Array(base)
    let my = Hunk.changes(from: base, to: Array(mine))
    let their = Hunk.changes(from: base, to: Array(theirs))
    var merged: [Character] = []
    var position = 0
    var (nextMine, nextTheirs) = (0, 0)
    while nextMine < my.count || nextTheirs < their.count {
      // A region: the first hunk left, with every hunk of either side that overlaps it.
      let takeMine =
        nextTheirs == their.count
        || (nextMine < my.count && my[nextMine].precedes(their[nextTheirs]))
      var region = takeMine ? my[nextMine].range : their[nextTheirs].range
      var (mineIn, theirsIn): ([Hunk], [Hunk]) = ([], [])
      while true {
        if nextMine < my.count, my[nextMine].overlaps(region) {
          region = region.union(my[nextMine].range)
          mineIn.append(my[nextMine])
          nextMine += 1
        } else if nextTheirs < their.count, their[nextTheirs].overlaps(region) {
          region = region.union(their[nextTheirs].range)
          theirsIn.append(their[nextTheirs])
          nextTheirs += 1
        } else {
          break
        }
      }
      merged += base[position..<region.lowerBound]
      let theirVersion = Hunk.apply(theirsIn, to: base, in: region)
      if theirsIn.isEmpty {
        merged += Hunk.apply(mineIn, to: base, in: region)
      } else if mineIn.isEmpty || Hunk.apply(mineIn, to: base, in: region) == theirVersion {
        merged += theirVersion
      } else {
        merged += Hunk.both(theirsIn, mineIn, to: base, in: region)
      }
      position = region.upperBound
    }
    merged += base[position...]
    return String(merged)
  }

  /// One change to a text: the characters in `range` replaced by `text`.
  struct Hunk: Equatable {
    var range: Range<Int>
    var text: ArraySlice<Character>

    /// Whether this hunk comes before `other` in the text (an insertion before a
    /// replacement that starts at the same place).
    func precedes(_ other: Hunk) -> Bool {
      (range.lowerBound, range.upperBound) < (other.range.lowerBound, other.range.upperBound)
    }

    /// Whether this hunk touches characters of `region`, or inserts where it inserts.
    func overlaps(_ region: Range<Int>) -> Bool {
      (range.lowerBound < region.upperBound && region.lowerBound < range.upperBound)
        || (range.isEmpty && region.isEmpty && range.lowerBound == region.lowerBound)
    }

    /// `region` of `base` with `hunks` (all inside it, in order) made.
    static func apply(_ hunks: [Hunk], to base: [Character], in region: Range<Int>)
      -> [Character]
    {
      var result: [Character] = []
      var position = region.lowerBound
      for hunk in hunks {
        result += base[position..<hunk.range.lowerBound]
        result += hunk.text
        position = hunk.range.upperBound
      }
      return result + base[position..<region.upperBound]
    }

    /// `region` of `base` with both sides' hunks made where they touch the same characters:
    /// a character either side took out is out, and what each side put in stays where it
    /// put it, theirs first where both put text at one place.
    static func both(_ theirs: [Hunk], _ mine: [Hunk], to base: [Character], in region: Range<Int>)
      -> [Character]
    {
      var result: [Character] = []
      for position in region.lowerBound...region.upperBound {
        for hunk in theirs + mine where hunk.range.lowerBound == position { result += hunk.text }
        let isKept =
          position < region.upperBound
          && !(theirs + mine).contains { $0.range.contains(position) }
        if isKept { result.append(base[position]) }
      }
      return result
    }

    /// The hunks that turn `old` into `new`, in order, by a longest common subsequence
    /// (fields are short: at most 100 characters).
    static func changes(from old: [Character], to new: [Character]) -> [Hunk] {
      // common[i][j]: how long the longest common subsequence of old[i...] and new[j...] is.
      var common = Array(
        repeating: [Int](repeating: 0, count: new.count + 1), count: old.count + 1)
      for i in stride(from: old.count - 1, through: 0, by: -1) {
        for j in stride(from: new.count - 1, through: 0, by: -1) {
          common[i][j] =
            old[i] == new[j]
            ? common[i + 1][j + 1] + 1 : max(common[i + 1][j], common[i][j + 1])
        }
      }
      var hunks: [Hunk] = []
      var (i, j) = (0, 0)
      var start: (Int, Int)?
      func close() {
        if let (oldStart, newStart) = start {
          hunks.append(Hunk(range: oldStart..<i, text: new[newStart..<j]))
          start = nil
        }
      }
      while i < old.count || j < new.count {
        if i < old.count, j < new.count, old[i] == new[j] {
          close()
          (i, j) = (i + 1, j + 1)
          continue
        }
        if start == nil { start = (i, j) }
        if j == new.count || (i < old.count && common[i + 1][j] >= common[i][j + 1]) {
          i += 1
        } else {
          j += 1
        }
      }
      close()
      return aligned(hunks, in: old)
    }

    /// Each hunk that only takes out or only puts in text, slid to where it starts and ends at
    /// word boundaries, where the text around it lets it ("one two three" less "two " is also
    /// less "wo t", as a diff may first find it): the other side's typing beside a word then
    /// never lands inside the change. Ties go to the leftmost place; a hunk stays clear of its
    /// neighbours (at least one character between them, as the diff leaves it).
    static func aligned(_ hunks: [Hunk], in old: [Character]) -> [Hunk] {
      var result = hunks
      for index in result.indices {
        let hunk = result[index]
        guard hunk.range.isEmpty != hunk.text.isEmpty else { continue }
        // NB: from `floor` to `ceiling`, the hunk may lie.
        let floor = index == 0 ? 0 : result[index - 1].range.upperBound + 1
        let ceiling = index == result.count - 1 ? old.count : result[index + 1].range.lowerBound - 1
        var (range, text) = (hunk.range, Array(hunk.text))
        func score() -> Int {
          let (first, last) =
            text.isEmpty
            ? (old[range.lowerBound], old[range.upperBound - 1]) : (text[0], text[text.count - 1])
          return boundary(range.lowerBound > 0 ? old[range.lowerBound - 1] : nil, first)
            + boundary(last, range.upperBound < old.count ? old[range.upperBound] : nil)
        }
        // Leftmost first, then each place to the right.
        while range.lowerBound > floor,
          old[range.lowerBound - 1]
            == (text.isEmpty ? old[range.upperBound - 1] : text[text.count - 1])
        {
          if !text.isEmpty { text = [old[range.lowerBound - 1]] + text.dropLast() }
          range = (range.lowerBound - 1)..<(range.upperBound - 1)
        }
        var best = (range: range, text: text, score: score())
        while range.upperBound < ceiling,
          old[range.upperBound] == (text.isEmpty ? old[range.lowerBound] : text[0])
        {
          if !text.isEmpty { text = text.dropFirst() + [old[range.lowerBound]] }
          range = (range.lowerBound + 1)..<(range.upperBound + 1)
          let now = score()
          if now > best.score { best = (range, text, now) }
        }
        result[index] = Hunk(range: best.range, text: ArraySlice(best.text))
      }
      return result
    }

    /// How well a change fits between `before` and `after` (nil: the text's start or end): at
    /// the text's edge best, then at a space, then at punctuation, and inside a word worst.
    static func boundary(_ before: Character?, _ after: Character?) -> Int {
      guard let before, let after else { return 3 }
      if before.isBlank || after.isBlank { return 2 }
      return before.isWordy && after.isWordy ? 0 : 1
    }
  }
}

extension Character {
  /// A space, tab, line break or no-break space (the same set as the web app's).
  fileprivate var isBlank: Bool {
    [0x20, 0x09, 0x0A, 0x0D, 0xA0, 0x3000].contains(unicodeScalars.first?.value ?? 0)
  }

  /// A letter or a digit (Unicode's general categories L and N, of its first scalar).
  fileprivate var isWordy: Bool {
    switch unicodeScalars.first?.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
      .decimalNumber, .letterNumber, .otherNumber:
      true
    default: false
    }
  }
}

extension Range where Bound == Int {
  fileprivate func union(_ other: Range<Int>) -> Range<Int> {
    Swift.min(lowerBound, other.lowerBound)..<Swift.max(upperBound, other.upperBound)
  }
}
