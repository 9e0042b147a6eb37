/// What the numbers mean and where the costs go: written from profiles (`perf record -g`
/// on the server during each scenario), kept beside the code that prints the numbers.
enum Notes {
  static let text = """
    - **This machine's speed drifts.** The same binary measures 11 µs or 17 µs a tick a few
      minutes apart (a shared VM; the load generator also shares its two cores). Compare the
      two servers within a run, not runs with each other: the fan-out rows take turns for
      that reason, and the many-rooms run is measured at the start and at the end.
    - **Where the fan-out's CPU goes.** The bench reads the kernel's part of each server's
      CPU from /proc. At 50 peers it is the same for both servers (4.4–4.5 ms per 1 000
      deliveries for ours, 4.4 for the C server, on 2026-11-24): one `send` per delivery each,
      and on loopback the receiving side's TCP work runs in the sender's context. What is
      left is user space: about 1.1–1.2 µs per delivery for ours against 0.35 µs for the C
      server, which only copies each message to every peer. Each action is decoded, reduced
      in the room's actor, diffed, encoded and acknowledged, and at 50 peers that is spread
      over 50 deliveries; at 500 it vanishes.
    - **Where the many-rooms CPU goes.** Each thread's exact run time
      (`/proc/PID/task/*/schedstat`, 30 s windows, 2026-11-24): the transport's service
      thread 9.2–9.8 % of a core, the two shards 4.8–5.7 % together, everything else 0.3 %.
      The service thread, which makes every `send`, costs what the bare C sender does for the
      same traffic (8.5–9.6 %, "The kernel's floor under the many-rooms CPU"): the gap to
      the floor is the shards, about 100 µs of shard time per room and tick, where the tick's
      reduce, diff and encode take ~9 µs in the micro. Most of it is ticking apart: with every
      meeting started in the same instant (a one-line change to the bench), each shard wakes
      once a second for its 250 ticks, and the shards took 1.8 % and 2.4 % of a core, against
      4.9 % and 6.2 % with the starts spread over the second in the runs beside them: a tick
      alone costs ~70 µs more than a tick batched with others. Waking up is not what costs,
      though. A bare timer thread that wakes for each tick and hands it to the sender, as a
      shard does (the floor's second row), costs ~22 µs per tick, and the sender costs no more
      for being woken that way than by its own timer. What costs is the room's work on caches
      that the other rooms, the client and the kernel have emptied in between: 60–80 µs per
      tick in Swift on the shard, where the same reduce, diff and patch message take ~4 µs
      warm in the micro, spread thin (no function above 6 % of the shards' samples; "The
      floor with the shards' hand-off" below). The ≤ 12 % target leaves ~2.5 points above
      the floor. Batching ticks across meetings
      saves CPU but moves them: a shard gets a tick every 4 ms, so pairing them delays a tick
      by up to 4 ms, on top of a p99 of 2–3 ms (bench client) and 4–5 ms (Python's); waking
      the ticks due in the next 4 or 10 ms early, with the one that is due, took the server
      to 13.3–14.0 % and 12.9 %, not under 12 % either, with ticks up to 10 ms early. Running
      a shard's jobs on the service thread itself, so that a tick costs one wake-up instead
      of two (branch `prototype/hosted-shard`), measured 13.5–16.7 % against 15.1–15.3 %,
      with a p99 of 4.4–6.2 ms; built properly on 2026-11-28 (the service thread's libuv
      loop running the shard's turns and timers), 19.9–20.6 % against 20.3–21.2 % with the
      rooms on threads of their own, over 90 s. Neither was taken ("Fewer wake-ups per tick,
      measured over 40 s" and "The rooms on the service thread, a third time" below).
      (/proc's split of a process's time into user and kernel is sampled at the scheduler's
      tick, and the shards' timer-driven bursts skew it:
      one 8 s window of this scenario read 13.9 % of 13.9 % in the kernel, where `perf` puts
      about two thirds there. The many-rooms rows show no split for that reason; the
      fan-out's split agreed with `perf` within a point.)
    - **Frames go out from the wake-up, not from writable callbacks.** Each writable request
      on the libuv loop costs four `epoll_ctl` calls (libuv re-registers a socket whenever
      lws turns POLLOUT on or off), and a `poll()` per frame asked whether the socket was
      full. Writing the queued frames straight from the service thread's wake-up, and
      stopping when lws holds part of one, brought the CPU per delivery from 2.68× the C
      server's to about 1.4× at 50 peers and from 1.57× to about 1.0× at 500. Connections
      that just sent something still go through a writable callback, so that lws's pong or
      close answer goes out first (Autobahn 5.19, 7.1.4).
    - **Each connection's outbox has its own lock**, and the ids the transport hands out
      carry it: a broadcast takes each recipient's lock and no lookup, and the service thread
      pops without one. With one dictionary behind one lock for every connection, 50-peer
      fan-outs measured 1.21–1.33× the C server; with outboxes of their own, 1.18–1.19× in
      three runs the same hour. Handing a room's frame over once instead, for the service
      thread to put in each outbox (or write at once), measured no better ("A room's frame
      handed over once" below).
    - **Pings go out ten times a second, behind frames.** The keepalive wheel used to turn
      once a second, and each turn pinged every connection that had fallen quiet in that
      second: with 10 000 connections opened within a few seconds, up to 1 600 pings in one
      batch held every tick behind them on the service thread. Turning it ten times a second
      took the many-rooms p99 lateness from 8.4 to 1.7 ms and its worst from 71 to 12 ms. A
      ping now waits for the next frame to its connection and goes out in the same write: a
      ticking room's people cost no ping send of their own, and the p99 fell from 2.3–2.8 to
      0.5–0.7 ms ("Pings behind the ticks" below). The C floor sends its pings the same way
      (`--pings-alone 1` for the old floor).
    - **The lobby.** Every join and leave in any room changes the lobby (who is in each
      room). It encodes only the summary that changed and writes its patch into the last
      version's JSON in place; its standups are a persistent tree, so a rename costs what
      a join costs at 100 or 5 000 standups.
    - **A reducer's body is built once per store,** and so are `Scope`'s and `ifLet`'s for
      their children, each behind a closure made in the reducer's own conformance
      (`BuiltReducer`), not an `any Reducer`: called through an existential, the body's
      generic reducers looked up their metadata on every action (8.6 % of the shards'
      samples in a many-rooms profile; 7.0 % once specialized, the rest in swift-case-paths'
      key paths and `AnyHashable`).
    - **A meeting's timer is kept by the shard that runs it.** Rooms, their effects and
      their sleeps run on shards (a thread per core but one, `StoreRuntime/Shard`); a meeting
      ticks with `Effect.timer`, which the shard keeps in its heap and reduces from its own
      loop, with no task per tick: a tick goes from its timer to its frames being queued in
      one turn of one thread, and the transport is woken once per batch of ticks (with the
      tick as a task that slept and hopped to its room, the shards took 13 % more, "Ticks
      kept by the shards").
    - **A tick's message** is the 61–64-byte JSON Patch in its envelope, `type` and
      `version`: about 100 bytes (the protocol's own example is 97).
    - **RSS per connection** in the fan-out rows is measured over 51 or 501 connections and
      includes the allocator's growth; the idle figure over 10 000 connections is the one
      the target is about. The C server keeps no state per connection beyond lws's own.
    - The bench's clients share the machine's two cores with the server, and one client
      thread reads every connection.
    """
}
