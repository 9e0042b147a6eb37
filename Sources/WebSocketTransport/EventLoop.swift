import CLibWebSockets

/// The libuv loop (epoll) one lws context runs on, owned here and lent to lws as a foreign
/// loop: the default `poll()` loop costs O(connections) on every wake-up, and owning the loop
/// is what lets the service thread stop it.
final class EventLoop {
  let pointer: UnsafeMutableRawPointer
  /// The one-element array `lws_context_creation_info.foreign_loops` wants.
  let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>

  init() throws {
    guard let pointer = clws_loop_create() else {
      throw WebSocketServerError(description: "libuv could not create an event loop.")
    }
    self.pointer = pointer
    foreignLoops = .allocate(capacity: 1)
    foreignLoops.initialize(to: pointer)
  }

  /// Runs until `stop()` is called from a callback on this thread.
  func run() { clws_loop_run(pointer) }

  func stop() { clws_loop_stop(pointer) }

  /// Frees the loop; call after `lws_context_destroy`.
  func destroy() {
    clws_loop_destroy(pointer)
    foreignLoops.deallocate()
  }
}
