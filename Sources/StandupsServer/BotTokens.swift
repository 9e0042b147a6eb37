/// The bots allowed in: each token's secret and the name it appears under.
public struct BotTokens: Sendable, Equatable {
  public struct Token: Sendable, Equatable {
    public var name: String
    public var secret: String
  }

  public private(set) var tokens: [Token] = []

  public init() {}

  /// Reads `NAME=SECRET` (the `--bot-token` flag) or `NAME:SECRET` entries (comma-separated in
  /// `STANDUPS_BOT_TOKENS`); throws with a message naming the bad entry.
  public init(flags: [String], environment: String?) throws(BotTokenError) {
    for flag in flags { try add(flag, separator: "=") }
    for entry in (environment ?? "").split(separator: ",") {
      try add(String(entry).trimmingWhitespace, separator: ":")
    }
  }

  private mutating func add(_ entry: String, separator: Character) throws(BotTokenError) {
    guard let split = entry.firstIndex(of: separator) else {
      throw BotTokenError("Bot token \"\(entry)\" must be NAME\(separator)SECRET.")
    }
    let name = String(entry[..<split]).trimmingWhitespace
    let secret = String(entry[entry.index(after: split)...])
    guard (1...40).contains(name.count) else {
      throw BotTokenError("A bot's name must be 1 to 40 characters (in \"\(name)\").")
    }
    guard secret.utf8.count >= 8 else {
      throw BotTokenError("The secret of bot \"\(name)\" must be at least 8 characters.")
    }
    tokens.append(Token(name: name, secret: secret))
  }

  /// The name of the bot holding `secret`, or nil. Compares in constant time per token.
  public func name(for secret: String) -> String? {
    var found: String?
    for token in tokens where Self.constantTimeEqual(token.secret, secret) {
      found = token.name
    }
    return found
  }

  static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let (a, b) = (Array(a.utf8), Array(b.utf8))
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
  }
}

public struct BotTokenError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}

extension String {
  var trimmingWhitespace: String {
    String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
  }
}
