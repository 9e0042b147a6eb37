/// What rooms count, for the server's `/metrics`: the server says where it goes; by default
/// nothing is counted.
public struct RoomMetrics: Sendable {
  /// An action was answered: `ok`, or the code of the error it was refused with.
  public var actionAnswered: @Sendable (_ outcome: String) -> Void
  /// A patch of `bytes` bytes went to `peers` peers.
  public var patchSent: @Sendable (_ bytes: Int, _ peers: Int) -> Void

  public init(
    actionAnswered: @escaping @Sendable (_ outcome: String) -> Void = { _ in },
    patchSent: @escaping @Sendable (_ bytes: Int, _ peers: Int) -> Void = { _, _ in }
  ) {
    self.actionAnswered = actionAnswered
    self.patchSent = patchSent
  }
}
