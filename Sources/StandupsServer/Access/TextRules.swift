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
    let lowered = name.lowercased()
    if botNames.contains(lowered) || lowered.contains("(bot)") {
      return "\"\(name)\" is a bot's name: choose another."
    }
    return nil
  }
}
