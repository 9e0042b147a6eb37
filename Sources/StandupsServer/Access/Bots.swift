import Crypto
import Foundation
import StandupsFeatures
import StandupsWire

/// A bot allowed in: its name, what it may do, where, and its token's SHA-256 (the token
/// itself is shown once, when the bot is added, and never stored).
public struct Bot: Sendable, Equatable {
  /// What a bot's token allows (`BotScope`, a wire value).
  public typealias Scope = BotScope

  public var name: String
  /// Lower-case hex SHA-256 of the token.
  public var tokenHash: String
  public var scope: Scope
  /// The standups it may use; empty means every standup and the lobby.
  public var standups: [UUID]
  public var createdAt: Date

  public init(name: String, tokenHash: String, scope: Scope, standups: [UUID] = [], createdAt: Date)
  {
    self.name = name
    self.tokenHash = tokenHash
    self.scope = scope
    self.standups = standups
    self.createdAt = createdAt
  }

  /// The standups a stored bot may use, from their column (ids joined by commas; empty: every
  /// standup). A list with anything in it that is not an id (the row was edited by hand, or
  /// damaged) lets the bot in nowhere rather than everywhere: it names only the nil id, which
  /// no standup has (theirs are random).
  static func standups(stored column: String) -> [UUID] {
    guard !column.isEmpty else { return [] }
    let entries = column.split(separator: ",", omittingEmptySubsequences: false)
    let ids = entries.compactMap { UUID(uuidString: String($0)) }
    return ids.count == entries.count
      ? ids : [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
  }

  /// Whether the bot may use this standup's room (nil: the lobby).
  func mayEnter(_ standup: UUID?) -> Bool {
    guard let standup else { return standups.isEmpty }
    return standups.isEmpty || standups.contains(standup)
  }

  /// How every token `bots add` makes starts: no bot's name may (one pasted in the wrong place).
  public static let tokenPrefix = "stb_"

  /// A new token: `stb_` and 43 characters of base64url (256 random bits).
  public static func makeToken() -> String {
    tokenPrefix + Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
  }

  public static func hash(token: String) -> String {
    SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
  }

  /// Why a bot's name is not usable, or nil.
  public static func problem(withName name: String) -> String? {
    guard !StandupRules.isBlank(name) else { return "A bot needs a name." }
    guard name.count <= 40 else {
      return StandupRules.tooLong("A bot's name", count: name.count, limit: 40)
    }
    guard name == name.trimmingWhitespace else {
      return "A bot's name cannot start or end with spaces."
    }
    // NB: the server shows a bot as "Name (bot)": a bot called "Driver (bot)" would sign as
    // another bot called Driver does — in any form that reads so (a full-width "（bot）").
    guard !TextRules.readable(name).hasSuffix(TextRules.readable("(bot)")) else {
      return "A bot's name cannot end in \"(bot)\": it is shown with one already."
    }
    guard TextRules.isPlain(name) else {
      return "A bot's name cannot contain control or direction-changing characters."
    }
    // NB: a token pasted where the name goes (`bots add stb_…`) would be shown to everyone in
    // the bot's rooms.
    guard !name.hasPrefix(tokenPrefix) else {
      return
        "A bot's name cannot start with \"stb_\" as its tokens do: a name is shown to everyone."
    }
    return nil
  }
}

/// Bots given on the command line (`--bot-token NAME=SECRET`, `STANDUPS_BOT_TOKENS`): the
/// form before `standups-server bots add`, kept for compatibility. Each is an `admin` bot for
/// every standup.
public struct BotTokens: Sendable, Equatable {
  public private(set) var bots: [Bot] = []
  /// Where each of `bots` was given, for errors.
  private var places: [String] = []
  /// Where a secret shorter than `strongSecretLength` was given (taken, and warned of).
  public private(set) var shortSecrets: [String] = []
  /// What `bots add` makes is 256 bits; a secret a person typed of fewer characters than this
  /// may be found by many addresses guessing together, each at 10 guesses a minute.
  public static let strongSecretLength = 20

  /// The warning for `shortSecrets`, or nil.
  public var shortSecretsWarning: String? {
    shortSecrets.isEmpty
      ? nil
      : "The secret in \(shortSecrets.joined(separator: ", ")) is under \(Self.strongSecretLength) characters: "
        + "a short secret can be guessed. Give a longer, random one, or add the bot with `standups-server bots add` (a 256-bit token)."
  }

  /// A command line is anyone's to read on this machine (`ps`, `/proc/PID/cmdline`).
  public static let onTheCommandLine =
    "--bot-token shows its secret to everyone on this machine (ps): add bots with `standups-server bots add`, or give STANDUPS_BOT_TOKENS instead."

  public init() {}

  /// Reads `NAME=SECRET` (the `--bot-token` flag) or `NAME:SECRET` entries (comma-separated in
  /// `STANDUPS_BOT_TOKENS`); throws with a message naming the bad entry — by where it is, not
  /// what it says: an entry that cannot be read may be all secret, and errors end up in logs.
  public init(flags: [String], environment: String?) throws(BotTokenError) {
    for (index, flag) in flags.enumerated() {
      try add(flag, separator: "=", where: "--bot-token number \(index + 1)")
    }
    // NB: empty entries (",,", a trailing comma) are skipped but counted, so that an entry
    // is named by its place as it is written.
    let entries = (environment ?? "").split(separator: ",", omittingEmptySubsequences: false)
    for (index, entry) in entries.enumerated() {
      let entry = String(entry).trimmingWhitespace
      if entry.isEmpty { continue }
      try add(entry, separator: ":", where: "entry \(index + 1) of STANDUPS_BOT_TOKENS")
    }
  }

  private mutating func add(
    _ entry: String, separator: Character, where place: String
  ) throws(BotTokenError) {
    guard let split = entry.firstIndex(of: separator) else {
      let other: Character = separator == "=" ? ":" : "="
      let mixedUp =
        entry.contains(other)
        ? ": it has \"\(other)\" where \"\(separator)\" goes (the flag takes NAME=SECRET, the variable NAME:SECRET)"
        : ""
      throw BotTokenError(
        "The bot token in \(place) must be NAME\(separator)SECRET\(mixedUp) (not shown: it may hold a secret)."
      )
    }
    // NB: not even the name is shown: an entry given the wrong way round (SECRET=NAME) has
    // the secret where the name goes.
    let name = String(entry[..<split]).trimmingWhitespace
    let secret = String(entry[entry.index(after: split)...])
    // NB: a token `bots add` made, given where the name goes, would be a bot's name — shown to
    // everyone in its rooms — and its name the secret.
    guard !name.hasPrefix(Bot.tokenPrefix) else {
      throw BotTokenError(
        "The name in \(place) starts with \"stb_\" as a token does: is it NAME\(separator)SECRET, in that order?"
      )
    }
    if let problem = Bot.problem(withName: name) {
      throw BotTokenError("The name in \(place): \(problem.lowercasedFirst)")
    }
    if let other = bots.firstIndex(where: {
      TextRules.readable($0.name) == TextRules.readable(name)
    }) {
      throw BotTokenError(
        bots[other].name.lowercased() == name.lowercased()
          ? "The bot in \(place) has the name of the one in \(places[other]): each bot needs a name of its own."
          : "The name in \(place) reads like the one in \(places[other]): each bot needs a name of its own."
      )
    }
    guard secret.utf8.count >= 8 else {
      throw BotTokenError(
        "The secret in \(place) must be at least 8 characters (is it NAME\(separator)SECRET, in that order?)."
      )
    }
    if secret.count < Self.strongSecretLength { shortSecrets.append(place) }
    bots.append(
      Bot(name: name, tokenHash: Bot.hash(token: secret), scope: .admin, createdAt: Date()))
    places.append(place)
  }
}

public struct BotTokenError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}

extension String {
  /// "A bot's name…" as "a bot's name…", to follow a colon.
  var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }

  var trimmingWhitespace: String {
    String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
  }
}
