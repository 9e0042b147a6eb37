import Foundation
import StandupsFeatures

/// Rules for text a person or a bot chooses (display names, bot names).
enum TextRules {
  /// Whether `text` is plain: see `StandupRules.isPlainText`.
  static func isPlain(_ text: String) -> Bool { StandupRules.isPlainText(text) }

  /// Why a person's display name is not usable, or nil. Bots' names are reserved, and
  /// "(bot)" is kept for bots' notes.
  static func problem(withDisplayName name: String, botNames: Set<String>) -> String? {
    // NB: nor one of characters drawn as nothing: a person nobody could see in the room.
    guard !StandupRules.isBlank(name) else { return "Choose a name to go by." }
    guard name.count <= 40 else {
      return StandupRules.tooLong("Your name", count: name.count, limit: 40)
    }
    guard isPlain(name) else {
      return "Your name cannot contain control or direction-changing characters, "
        + "or more than \(StandupRules.marksPerCharacter) marks on one character."
    }
    let readable = readable(name)
    if let bot = botNames.first(where: { Self.readable($0) == readable }) {
      return name.lowercased() == bot.lowercased()
        ? "\"\(name)\" is a bot's name: choose another."
        : "\"\(name)\" reads like the name of the bot \"\(bot)\": choose another."
    }
    if readable.contains(Self.readable("(bot)")) {
      return "\"(bot)\" marks a bot's notes, so a person's name cannot have it: choose another."
    }
    return nil
  }

  /// A name as people read it, to tell whether two names are the same (a simplified
  /// skeleton of Unicode's UTS #39): compatibility forms folded (a full-width "（bot）" is
  /// "(bot)"), accents apart from their letters, every character Unicode draws as nothing
  /// left out (the default-ignorable ones: joiners, soft hyphens, the grapheme joiner,
  /// variation selectors, Hangul fillers), blanks read as one space between words (a braille
  /// blank is a space; none at either end), letters that look the same read as one
  /// (a capital "I", a small "l", a "1"; "0" and "O"; "rn" and "m"; the Cyrillic, Greek,
  /// Armenian and Cherokee letters drawn like Latin ones, `lookAlikes`), and case ignored. So "CI" followed by a
  /// zero-width joiner, "ci", "Cl", "C1" and a Cyrillic "СІ" all read as "CI" (and, case
  /// being ignored, a small "i" reads as an "l" too).
  static func readable(_ name: String) -> String {
    var scalars = String.UnicodeScalarView()
    for original in name.decomposedStringWithCompatibilityMapping.unicodeScalars
    where !original.properties.isDefaultIgnorableCodePoint
      && original.properties.generalCategory != .format
    {
      if original.properties.isWhitespace || original.value == 0x2800 {
        scalars.append(" ")
        continue
      }
      // NB: Cherokee's small letters are its capitals drawn smaller: they read as those.
      let scalar =
        cherokeeSmallLetters.contains { $0.contains(original.value) }
        ? original.properties.uppercaseMapping.unicodeScalars.first ?? original : original
      if let latin = lookAlikes[scalar] {
        scalars.append(latin)
      } else {
        scalars.append(scalar)
      }
    }
    // NB: case is ignored, so a small "i" reads as the capital "I", which reads as "l".
    return String(scalars).lowercased()
      .replacingOccurrences(of: "i", with: "l")
      .replacingOccurrences(of: "rn", with: "m")
      .split(separator: " ").joined(separator: " ")
  }

  /// Characters drawn like a Latin letter (in the fonts the web app uses), and that letter:
  /// Unicode's confusables for Latin, limited to whole letters of the scripts whose letters
  /// pass for Latin ones (Cyrillic, Greek, Armenian, Cherokee). Applied before case is folded: a Greek capital
  /// "Ν" reads as "N", its small letter "ν" as "v".
  static let lookAlikes: [Unicode.Scalar: Unicode.Scalar] = {
    let pairs: [(String, Character)] = [
      // Latin and digits that read alike.
      ("I1|", "l"), ("0", "O"),
      // Cyrillic capitals.
      ("А", "A"), ("В", "B"), ("Е", "E"), ("Ѕ", "S"), ("ІӀ", "l"), ("Ј", "J"), ("К", "K"),
      ("М", "M"), ("Н", "H"), ("О", "O"), ("Р", "P"), ("С", "C"), ("Т", "T"), ("УҮ", "Y"),
      ("Х", "X"), ("Ԛ", "Q"), ("Ԝ", "W"), ("Ѵ", "V"),
      // Cyrillic small letters.
      ("а", "a"), ("с", "c"), ("ԁ", "d"), ("е", "e"), ("һ", "h"), ("і", "i"), ("ј", "j"),
      ("ӏ", "l"), ("о", "o"), ("р", "p"), ("ԛ", "q"), ("ѕ", "s"), ("ԝ", "w"), ("х", "x"),
      ("уү", "y"), ("ѵ", "v"),
      // Greek capitals.
      ("Α", "A"), ("Β", "B"), ("Ε", "E"), ("Ζ", "Z"), ("Η", "H"), ("Ι", "l"), ("Κ", "K"),
      ("Μ", "M"), ("Ν", "N"), ("Ο", "O"), ("Ρ", "P"), ("Τ", "T"), ("Υ", "Y"), ("Χ", "X"),
      ("Ϲ", "C"), ("Ϳ", "J"),
      // Greek small letters.
      ("ο", "o"), ("ν", "v"), ("ρ", "p"), ("ϲ", "c"), ("ϳ", "j"),
      // Armenian.
      ("\u{0555}", "O"), ("\u{054D}", "U"), ("\u{054F}", "S"), ("\u{053C}", "L"),
      ("\u{0585}", "o"), ("\u{057D}", "u"), ("\u{0581}", "g"), ("\u{0570}", "h"),
      ("\u{0578}\u{057C}", "n"), ("\u{0566}\u{0563}", "q"), ("\u{0561}", "w"),
      ("\u{0575}", "j"), ("\u{0584}", "f"),
      // Cherokee (its capitals; case is folded after this).
      ("\u{13AA}", "A"), ("\u{13F4}", "B"), ("\u{13DF}", "C"), ("\u{13A0}", "D"),
      ("\u{13AC}", "E"), ("\u{13C0}", "G"), ("\u{13BB}", "H"), ("\u{13AB}", "J"),
      ("\u{13E6}", "K"), ("\u{13DE}", "L"), ("\u{13B7}", "M"), ("\u{13E2}", "P"),
      ("\u{13A1}\u{13D2}", "R"), ("\u{13DA}", "S"), ("\u{13A2}", "T"), ("\u{13D9}", "V"),
      ("\u{13B3}\u{13D4}", "W"), ("\u{13C3}", "Z"), ("\u{13CF}", "b"), ("\u{13C2}", "h"),
      ("\u{13A9}", "y"), ("\u{13A5}", "i"), ("\u{13BD}", "Y"), ("\u{13D5}", "S"),
      ("\u{13F3}", "G"), ("\u{13E7}", "d"),
    ]
    var table: [Unicode.Scalar: Unicode.Scalar] = [:]
    for (alikes, latin) in pairs {
      for alike in alikes.unicodeScalars { table[alike] = latin.unicodeScalars.first }
    }
    return table
  }()

  /// Cherokee's small letters (Unicode 8), each drawn as its capital.
  static let cherokeeSmallLetters: [ClosedRange<UInt32>] = [0x13F8...0x13FD, 0xAB70...0xABBF]
}
