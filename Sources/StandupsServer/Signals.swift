import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM (and stops them from killing the process meanwhile).
public func waitForTerminationSignal() async -> Int32 {
  let (signals, continuation) = AsyncStream<Int32>.makeStream()
  var sources: [any DispatchSourceSignal] = []
  for number in [SIGINT, SIGTERM] {
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler { continuation.yield(number) }
    source.resume()
    sources.append(source)
  }
  var iterator = signals.makeAsyncIterator()
  let received = await iterator.next() ?? SIGTERM
  for source in sources { source.cancel() }
  return received
}
