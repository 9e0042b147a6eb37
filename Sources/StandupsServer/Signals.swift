import Dispatch
import Foundation

/// SIGINT and SIGTERM, caught from the moment this is made: make it before the server starts,
/// so that a signal that comes while it starts (a rolling restart, a test that stops it at
/// once) is waited for and acted on rather than killing the process without a word.
public final class TerminationSignals {
  private let signals: AsyncStream<Int32>
  private let sources: [any DispatchSourceSignal]

  public init() {
    let (signals, continuation) = AsyncStream<Int32>.makeStream()
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      sources.append(source)
    }
    self.signals = signals
    self.sources = sources
  }

  /// Waits for the first signal (one that came before this call included).
  public func first() async -> Int32 {
    var iterator = signals.makeAsyncIterator()
    let received = await iterator.next() ?? SIGTERM
    for source in sources { source.cancel() }
    return received
  }
}
