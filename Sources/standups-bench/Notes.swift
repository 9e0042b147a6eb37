/// What the numbers mean and where the costs go: written from profiles (`perf record -g`
/// on the server during each scenario), kept beside the code that prints the numbers.
enum Notes {
  static let text = """
    - **This machine's speed drifts.** The same binary measures 11 µs or 17 µs a tick a few
      minutes apart (a shared VM; the load generator also shares its two cores). Compare the
      two servers within a run, not runs with each other: the fan-out rows take turns for
      that reason, and the many-rooms run is measured at the start and at the end. Across
      runs today: 1.31–1.65× the C server's CPU per delivery at 50 peers, 0.99–1.13× at
      500, and 18.5–27.6 % of a core for the 500 × 20 rooms — that target sits at its limit
      on this machine, met in some runs and missed in others.
    - **Where the server's CPU goes.** In a fan-out about 60 % of the service thread's time
      is the kernel's `send` path; on loopback that includes the receiving side's TCP work,
      which the C server pays the same way. Standups' own code (decode, reduce, diff,
      encode, the outboxes) is a few percent of the total.
    - **Frames go out from the wake-up, not from writable callbacks.** Each writable request
      on the libuv loop costs four `epoll_ctl` calls (libuv re-registers a socket whenever
      lws turns POLLOUT on or off), and a `poll()` per frame asked whether the socket was
      full. Writing the queued frames straight from the service thread's wake-up, and
      stopping when lws holds part of one, brought the CPU per delivery from 2.68× the C
      server's to about 1.4× at 50 peers and from 1.57× to about 1.0× at 500, and the
      500 × 20 rooms from 28.7 % to about 20–24 % of a core. Connections that just sent
      something still go through a writable callback, so that lws's pong or close answer
      goes out first (Autobahn 5.19, 7.1.4).
    - **The lobby.** Every join and leave in any room changes the lobby (who is in each
      room). It used to encode and diff every standup's summary for each: with 500 rooms
      the lobby fell seconds behind and took 1.2 cores through the whole many-rooms run
      (it also explains the ~40 ms note latency of the earlier 200-room run). It now
      encodes only the summaries that changed, and arrays whose elements stay in place are
      diffed place by place, without the id bookkeeping.
    - **A reducer's body is built once per store.** Building `Room`'s body instantiated its
      key paths and case paths at run time on every action, more than the rest of a tick;
      the store now builds it once (`Reducer.core`), and so do `Scope` and `ifLet` for their
      children.
    - **Sleeps wait on the shard that runs the meeting.** `ContinuousClock.sleep` on Linux
      is a dispatch timer per sleep: arming it wakes dispatch's manager thread, and firing
      it wakes it again before a pool thread runs the meeting. Rooms, their effects and
      their sleeps now run on shards (one thread per core, `StoreRuntime/Shard`): the shard
      keeps its sleepers in a heap and wakes them from its own loop, so a tick goes from its
      timer to its frames being queued on one thread, and the transport is woken once per
      batch of ticks. What is left in the many-rooms run is mostly the service thread's
      sends (the kernel's `send` to 10 000 loopback sockets a second) and the tick's reduce
      and encode on the shards; keep-alive pings no longer cost more per connection as
      connections grow (the keepalive wheel).
    - **What is left at 50 peers** (about 1.4×): each action is also decoded, reduced in
      the room's actor, diffed, encoded and acknowledged, with two thread hops (service
      thread → room → service thread), and that cost is spread over 50 deliveries. At 500
      peers it vanishes.
    - **A tick's message** is the 61–64-byte JSON Patch in its envelope, `type` and
      `version`: about 100 bytes (the protocol's own example is 97). Versions are small
      counters, reserved on disk per room in blocks (docs/PROTOCOL.md, "Versions"); they
      were microseconds since 1970 before, 12 bytes more in every message.
    - **RSS per connection** in the fan-out rows is measured over 51 or 501 connections and
      includes the allocator's growth; the idle figure over 10 000 connections is the one
      the target is about. The C server keeps no state per connection beyond lws's own.
    - The bench's clients share the machine's two cores with the server, and one client
      thread reads every connection.
    """
}
