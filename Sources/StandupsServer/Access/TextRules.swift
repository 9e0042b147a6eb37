import Foundation
import StandupsFeatures

/// Rules for text a person or a bot chooses (display names, bot names).
enum TextRules {
  /// Whether `text` is plain: see `StandupRules.isPlainText`.
  static func isPlain(_ text: String) -> Bool { StandupRules.isPlainText(text) }

  /// Why a person's display name is not usable, or nil. Bots' names are reserved, and
  /// "(bot)" is kept for bots' notes.
  static func problem(withDisplayName name: String, botNames: Set<String>) -> String? {
    guard (1...40).contains(name.count) else {
      return "Your name must be 1 to 40 characters."
    }
    guard isPlain(name) else {
      return "Your name cannot contain control or direction-changing characters, "
        + "or more than \(StandupRules.scalarsPerCharacter) marks on one character."
    }
    let readable = readable(name)
    if botNames.contains(where: { Self.readable($0) == readable }) || readable.contains("(bot)") {
      return "\"\(name)\" is a bot's name: choose another."
    }
    return nil
  }

  /// A name as people read it, to tell whether two names are the same: compatibility forms
  /// folded (a full-width "（bot）" is "(bot)"), case ignored, and the invisible format
  /// characters that plain text allows (joiners, soft hyphens) left out: "CI" followed by a
  /// zero-width joiner reads as "CI". (Letters of other scripts that look alike, a Cyrillic
  /// "І" for a Latin "I", are not caught.)
  static func readable(_ name: String) -> String {
    let folded = name.precomposedStringWithCompatibilityMapping.lowercased()
    var scalars = String.UnicodeScalarView()
    scalars.append(
      contentsOf: folded.unicodeScalars.filter { $0.properties.generalCategory != .format })
    return String(scalars)
  }
}
