import Crypto
import Foundation
import JSONPatch

/// The team's secret, made once and kept with the data, and what is derived from it: the
/// invite people open once, and the key that signs their sessions.
///
/// Nothing derived reveals the secret: the invite and the session key are HMAC-SHA256 of
/// fixed labels under it, so a leaked invite cannot forge a session. Rotating the secret
/// changes all three at once, which ends every session.
public struct TeamSecret: Sendable, Equatable {
  /// 32 random bytes.
  public let bytes: [UInt8]
  /// What the invite link carries after `#`: 43 characters of base64url.
  public let invite: String
  /// Names this secret in sessions it signed, so that one signed by an older secret reads as
  /// ended rather than forged.
  public let keyID: String
  /// Signs sessions.
  private let sessionKey: SymmetricKey

  // NB: derived once: every upgrade and API request reads the key id and the session key.
  public init(bytes: [UInt8]) {
    self.bytes = bytes
    let key = SymmetricKey(data: bytes)
    func derive(_ label: String) -> [UInt8] {
      Array(HMAC<SHA256>.authenticationCode(for: Array(label.utf8), using: key))
    }
    invite = Base64URL.encode(derive("standups invite v1"))
    keyID = derive("standups key id v1").prefix(6).map { String(format: "%02x", $0) }.joined()
    sessionKey = SymmetricKey(data: derive("standups session v1"))
  }

  public static func == (a: TeamSecret, b: TeamSecret) -> Bool { a.bytes == b.bytes }

  /// A new secret from the system's cryptographic random source.
  public static func random() -> TeamSecret {
    TeamSecret(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
  }

  /// Whether `text` is this secret's invite (compared in constant time), in its one spelling:
  /// base64 leaves bits unused in a last character, which would let a few spellings decode
  /// the same.
  public func isInvite(_ text: String) -> Bool {
    let text = text.trimmingCharacters(in: .whitespaces)
    guard let bytes = Base64URL.decode(text), Base64URL.encode(bytes) == text else {
      return false
    }
    return HMAC<SHA256>.isValidAuthenticationCode(
      bytes, authenticating: Array("standups invite v1".utf8), using: SymmetricKey(data: self.bytes)
    )
  }

  /// Signs a session for `name`, valid until `expires`. Each is one of its own (`sid`, random;
  /// a renamed session keeps its `id`), so that signing one out ends no other, even one for
  /// the same name in the same second.
  func session(name: String, expires: Date, id: String? = nil) -> String {
    let id = id ?? Base64URL.encode((0..<12).map { _ in UInt8.random(in: .min ... .max) })
    let payload = JSONValue.object([
      "name": .string(name), "exp": .int(Int(expires.timeIntervalSince1970)), "sid": .string(id),
    ]).encoded
    return signedSession(payload)
  }

  /// A session token holding `payload` (JSON), signed.
  func signedSession(_ payload: [UInt8]) -> String {
    let signed = "v1.\(keyID).\(Base64URL.encode(payload))"
    let mac = HMAC<SHA256>.authenticationCode(
      for: Array(signed.utf8), using: sessionKey)
    return signed + "." + Base64URL.encode(Array(mac))
  }

  /// Reads a session token this secret (or an older one) signed.
  func verifySession(_ token: String, now: Date) -> SessionCheck {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    // NB: the signature's text must be the one encoding of its bytes: base64's spare bits
    // would otherwise give one signature several spellings (and a signed-out cookie, kept by
    // its id, is no help there; the id is what ends it).
    guard parts.count == 4, parts[0] == "v1", let mac = Base64URL.decode(String(parts[3])),
      Base64URL.encode(mac) == parts[3]
    else {
      return .forged
    }
    guard parts[1] == keyID else { return .ended }
    let signed = parts[0...2].joined(separator: ".")
    guard
      HMAC<SHA256>.isValidAuthenticationCode(
        mac, authenticating: Array(signed.utf8),
        using: sessionKey),
      let payload = Base64URL.decode(String(parts[2])),
      let object = try? JSONValue(parsing: payload),
      let name = object["name"]?.stringValue, let expires = object["exp"]?.intValue
    else { return .forged }
    guard Double(expires) > now.timeIntervalSince1970 else { return .expired }
    // NB: a session from before sessions had ids is known by its signature.
    let id = object["sid"]?.stringValue ?? String(parts[3])
    return .valid(
      Session(name: name, expires: Date(timeIntervalSince1970: Double(expires)), id: id))
  }
}

/// A person's signed-in session: the name they chose, when it ends, and its id (the same
/// through renames; what a sign-out ends).
public struct Session: Sendable, Equatable {
  public var name: String
  public var expires: Date
  public var id: String

  /// What storage keeps of a signed-out session: its id's SHA-256.
  var signedOutKey: String { Bot.hash(token: "session:" + id) }

  /// What a room shows of the session, so that presence tells sign-ins apart (one person's
  /// tabs are one; two people who chose one name are two): part of a hash of its id, which
  /// neither is the session nor leads to it.
  var personKey: String { String(Bot.hash(token: "person:" + id).prefix(16)) }
}

/// What a session cookie turned out to be.
enum SessionCheck: Equatable {
  case valid(Session)
  /// Signed under a secret that was rotated away.
  case ended
  case expired
  /// Signed out (`DELETE /api/session`), here or on any node.
  case signedOut
  /// Not signed by this team: refused, but counts as no guess (an HMAC is not guessed).
  case forged
}

/// RFC 4648 §5 base64url without padding, as used in links and cookies.
enum Base64URL {
  static func encode(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  static func decode(_ text: String) -> [UInt8]? {
    guard !text.isEmpty, text.utf8.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
      of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64).map(Array.init)
  }

  private static let alphabet = Set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
