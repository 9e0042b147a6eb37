// What the kernel alone charges a server for the many-rooms scenario's traffic on this
// machine: the floor under standups-server's CPU in that scenario.
//
// A bare sender, in C, with no WebSocket library, no rooms and no state, holds
// `rooms × peers` loopback TCP connections (TCP_NODELAY, as lws sets) and does what the
// server must do for them and nothing else:
//   - once a second it writes a 97-byte text frame (a tick's patch in its envelope) to the
//     `peers` sockets of each room, the rooms spread evenly over the second as the meetings'
//     ticks are: one `send` per delivery;
//   - it pings every connection once every `ping-after` seconds (the server pings what it has
//     not heard from for 15 s; the scenario's clients never speak), each ping in the same
//     `send` as a tick to that connection, right behind it, as the server writes them (with
//     `--pings-alone`, a `send` of its own, spread the same way), and reads the pongs as they
//     come, sleeping in `epoll_wait` between rooms as a server does.
// A child process (forked, so that each side holds its own 10 000 descriptors) connects,
// reads everything with one thread on epoll as the bench's client does, and answers pings.
//
// The sending thread's exact run time, from /proc/thread-self/schedstat, is the floor. Its
// user time is a loop and a few comparisons; the rest is the kernel's send path and, on
// loopback, the receiving side's TCP work and wake-ups, which run in the sender's context.
// (/proc's split of a process's time into user and kernel is sampled at the scheduler's
// tick, which bursts started by timers skew: it is not used here.)
//
// With `--handoff N`, the ticks are timed by N other threads (a server's room threads, one
// per core), each waking on its own timer for its share of the rooms and handing the tick to
// the sending thread through a queue and an eventfd, as standups-server's shards hand frames
// to its transport: the floor of any design that keeps rooms off the thread that sends, with
// no room work at all. The CPU then counts every thread.
//
//   standups-send-floor --rooms 500 --peers 20 --seconds 90 [--handoff 2] [--pings-alone 1]
//                       [--window-ms 4]
//
// With `--window-ms W` (no hand-off), the ticks due within each W ms are sent together at its
// end, one wake-up for several rooms: what coalescing the rooms' timers would save the
// sender, their ticks late by up to W ms.
//
// Prints a Markdown table of one row.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { tickSize = 97, pingSize = 6, pongSize = 10 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// This thread's run time so far, in nanoseconds (exact, unlike /proc's user/system split).
static long long threadRunTime(void) {
  FILE *file = fopen("/proc/thread-self/schedstat", "r");
  long long nanoseconds = 0;
  if (file == NULL || fscanf(file, "%lld", &nanoseconds) != 1) {
    fprintf(stderr, "standups-send-floor: cannot read /proc/thread-self/schedstat\n");
    exit(1);
  }
  fclose(file);
  return nanoseconds;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

/// The hand-off: timer threads push the rooms whose tick is due, the sender pops them.
static struct {
  pthread_mutex_t lock;
  int *rooms;
  long pushed, popped;
  int capacity, wake, threads, roomCount, seconds;
  double start;
  long long *runTimes;
} handoff = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void sleepUntil(double due) {
  struct timespec until = {.tv_sec = (time_t)due, .tv_nsec = (long)((due - (time_t)due) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
  }
}

/// A timer thread: wakes when each of its rooms' ticks is due and hands the room over.
static void *timeTicks(void *argument) {
  int thread = (int)(intptr_t)argument;
  for (int second = 0; second < handoff.seconds; second++) {
    for (int room = thread; room < handoff.roomCount; room += handoff.threads) {
      sleepUntil(handoff.start + second + (double)room / handoff.roomCount);
      pthread_mutex_lock(&handoff.lock);
      handoff.rooms[handoff.pushed++ % handoff.capacity] = room;
      pthread_mutex_unlock(&handoff.lock);
      uint64_t one = 1;
      if (write(handoff.wake, &one, sizeof one) != sizeof one) fail("eventfd");
    }
  }
  handoff.runTimes[thread] = threadRunTime();
  return NULL;
}

/// The child: opens `count` connections and reads everything on one thread, answering each
/// ping with a masked pong, until the parent closes them.
static void readAll(struct sockaddr_in address, int count) {
  int *sockets = calloc((size_t)count, sizeof(int));
  int poller = epoll_create1(0);
  int one = 1;
  if (sockets == NULL || poller < 0) fail("reader");
  for (int index = 0; index < count; index++) {
    sockets[index] = socket(AF_INET, SOCK_STREAM, 0);
    if (sockets[index] < 0 || connect(sockets[index], (void *)&address, sizeof address) != 0)
      fail("reader: connect");
    setsockopt(sockets[index], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)index};
    epoll_ctl(poller, EPOLL_CTL_ADD, sockets[index], &event);
  }
  // A frame may straddle two reads: how many bytes of the current one are still to come, or
  // -1 when only its first byte came.
  int *skip = calloc((size_t)count, sizeof(int));
  unsigned char buffer[65536];
  // The ping's payload (1 2 3 4) echoed, masked with the key 1 2 3 4: 0 0 0 0.
  const unsigned char pong[pongSize] = {0x8a, 0x84, 1, 2, 3, 4, 0, 0, 0, 0};
  int open = count;
  struct epoll_event events[256];
  while (open > 0) {
    int ready = epoll_wait(poller, events, 256, -1);
    for (int e = 0; e < ready; e++) {
      int index = (int)events[e].data.u32;
      ssize_t got = recv(sockets[index], buffer, sizeof buffer, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN)) {
        epoll_ctl(poller, EPOLL_CTL_DEL, sockets[index], NULL);
        close(sockets[index]);
        open--;
        continue;
      }
      // Every frame here is short: a two-byte header and its payload.
      ssize_t at = skip[index] == -1 ? 1 + buffer[0] : skip[index];
      skip[index] = 0;
      while (at < got) {
        if (buffer[at] == 0x89) send(sockets[index], pong, pongSize, 0);
        if (at + 1 == got) {
          skip[index] = -1;
          break;
        }
        at += 2 + buffer[at + 1];
      }
      if (at > got) skip[index] = (int)(at - got);
    }
  }
  exit(0);
}

int main(int argc, char **argv) {
  int rooms = 500, peers = 20, seconds = 90, pingAfter = 15, handoffThreads = 0, pingsAlone = 0,
      windowMs = 0;
  for (int index = 1; index + 1 < argc; index += 2) {
    int value = atoi(argv[index + 1]);
    if (strcmp(argv[index], "--rooms") == 0) rooms = value;
    else if (strcmp(argv[index], "--peers") == 0) peers = value;
    else if (strcmp(argv[index], "--seconds") == 0) seconds = value;
    else if (strcmp(argv[index], "--ping-after") == 0) pingAfter = value;
    else if (strcmp(argv[index], "--handoff") == 0) handoffThreads = value;
    else if (strcmp(argv[index], "--pings-alone") == 0) pingsAlone = value != 0;
    else if (strcmp(argv[index], "--window-ms") == 0) windowMs = value;
    else {
      fprintf(stderr,
              "usage: %s [--rooms N] [--peers N] [--seconds N] [--ping-after N] [--handoff N] "
              "[--pings-alone 0|1] [--window-ms N]\n",
              argv[0]);
      return 2;
    }
  }
  if (rooms < 1 || peers < 1 || seconds < 1 || pingAfter < 1 || handoffThreads < 0 ||
      windowMs < 0 || (windowMs > 0 && handoffThreads > 0)) {
    fprintf(stderr, "standups-send-floor: every number must be at least 1 (--handoff and "
                    "--window-ms: 0), and --window-ms times the ticks without a hand-off\n");
    return 2;
  }
  int count = rooms * peers;

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, (void *)&address, sizeof address) != 0 ||
      listen(listener, 4096) != 0 || getsockname(listener, (void *)&address, &length) != 0)
    fail("listen");
  pid_t reader = fork();
  if (reader < 0) fail("fork");
  if (reader == 0) {
    close(listener);
    readAll(address, count);
  }

  int *sockets = calloc((size_t)count, sizeof(int));
  int poller = epoll_create1(0);
  int one = 1;
  if (sockets == NULL || poller < 0) fail("sender");
  for (int index = 0; index < count; index++) {
    sockets[index] = accept(listener, NULL, NULL);
    if (sockets[index] < 0) fail("accept");
    setsockopt(sockets[index], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)index};
    epoll_ctl(poller, EPOLL_CTL_ADD, sockets[index], &event);
  }
  sleep(1);

  unsigned char tick[tickSize] = {0x81, tickSize - 2};
  memset(tick + 2, 'x', tickSize - 2);
  const unsigned char ping[pingSize] = {0x89, 0x04, 1, 2, 3, 4};
  unsigned char tickAndPing[tickSize + pingSize];
  memcpy(tickAndPing, tick, tickSize);
  memcpy(tickAndPing + tickSize, ping, pingSize);
  unsigned char buffer[4096];
  struct epoll_event events[256];
  // Each room's turn pings its share of the connections: all of them every `pingAfter` s.
  long pingsDue = 0, pingsSent = 0, sends = 0, pongBytes = 0;
  long long before = threadRunTime();
  double start = now();
  pthread_t *timers = NULL;
  if (handoffThreads > 0) {
    handoff.capacity = rooms;
    handoff.rooms = calloc((size_t)rooms, sizeof(int));
    handoff.runTimes = calloc((size_t)handoffThreads, sizeof(long long));
    handoff.wake = eventfd(0, EFD_NONBLOCK);
    handoff.threads = handoffThreads;
    handoff.roomCount = rooms;
    handoff.seconds = seconds;
    handoff.start = start;
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    timers = calloc((size_t)handoffThreads, sizeof(pthread_t));
    if (handoff.rooms == NULL || handoff.runTimes == NULL || handoff.wake < 0 || timers == NULL ||
        epoll_ctl(poller, EPOLL_CTL_ADD, handoff.wake, &event) != 0)
      fail("handoff");
    for (int thread = 0; thread < handoffThreads; thread++)
      if (pthread_create(&timers[thread], NULL, timeTicks, (void *)(intptr_t)thread) != 0)
        fail("pthread_create");
  }
  for (long turn = 0; turn < (long)seconds * rooms; turn++) {
    int room = (int)(turn % rooms);
    if (handoffThreads > 0) {
      // The next room is whichever a timer thread handed over: wait for one.
      for (;;) {
        pthread_mutex_lock(&handoff.lock);
        int ready = handoff.popped < handoff.pushed;
        if (ready) room = handoff.rooms[handoff.popped++ % handoff.capacity];
        pthread_mutex_unlock(&handoff.lock);
        if (ready) break;
        int woken = epoll_wait(poller, events, 256, -1);
        for (int e = 0; e < woken; e++) {
          if (events[e].data.u32 == UINT32_MAX) {
            uint64_t value;
            if (read(handoff.wake, &value, sizeof value) < 0 && errno != EAGAIN) fail("eventfd");
            continue;
          }
          ssize_t got = recv(sockets[events[e].data.u32], buffer, sizeof buffer, MSG_DONTWAIT);
          if (got > 0) pongBytes += got;
        }
      }
    } else {
      double offset = (double)room / rooms;
      // NB: with a window, a tick waits for the end of the window it falls in.
      if (windowMs > 0) offset = (double)((long)(offset * 1000 / windowMs) + 1) * windowMs / 1000;
      double due = start + (double)(turn / rooms) + offset;
      for (;;) {
        double left = due - now();
        // NB: epoll_wait counts whole milliseconds: round up rather than spin.
        int ready = epoll_wait(poller, events, 256, left > 0 ? (int)(left * 1000) + 1 : 0);
        for (int e = 0; e < ready; e++) {
          ssize_t got = recv(sockets[events[e].data.u32], buffer, sizeof buffer, MSG_DONTWAIT);
          if (got > 0) pongBytes += got;
        }
        if (left <= 0) break;
      }
    }
    long second = turn / rooms;
    for (int peer = 0; peer < peers; peer++) {
      int index = room * peers + peer;
      // NB: each connection's ping rides its tick once every `pingAfter` seconds, the
      // connections' turns spread over those seconds.
      if (!pingsAlone && (second + index) % pingAfter == 0) {
        if (send(sockets[index], tickAndPing, sizeof tickAndPing, 0) != (ssize_t)sizeof tickAndPing)
          fail("send");
        pingsSent++;
      } else if (send(sockets[index], tick, tickSize, 0) != tickSize) {
        fail("send");
      }
      sends++;
    }
    if (pingsAlone) {
      pingsDue += count;
      for (; pingsDue >= (long)rooms * pingAfter; pingsDue -= (long)rooms * pingAfter) {
        if (send(sockets[pingsSent++ % count], ping, pingSize, 0) != pingSize) fail("send");
      }
    }
  }
  double elapsed = now() - start;
  long long runTime = threadRunTime() - before, timerRunTime = 0;
  for (int thread = 0; thread < handoffThreads; thread++) {
    pthread_join(timers[thread], NULL);
    timerRunTime += handoff.runTimes[thread];
  }
  runTime += timerRunTime;

  for (int index = 0; index < count; index++) close(sockets[index]);
  waitpid(reader, NULL, 0);
  char shape[96];
  if (handoffThreads > 0)
    snprintf(shape, sizeof shape, "%d × %d, ticks handed over by %d timer thread%s", rooms, peers,
             handoffThreads, handoffThreads == 1 ? "" : "s");
  else if (windowMs > 0)
    snprintf(shape, sizeof shape, "%d × %d, ticks sent together every %d ms", rooms, peers,
             windowMs);
  else
    snprintf(shape, sizeof shape, "%d × %d", rooms, peers);
  printf("| rooms × peers | window | tick frames sent | pings sent / pongs read | CPU, every "
         "thread | of one core | per tick frame | of which, timer threads |\n");
  printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  printf("| %s | %.0f s | %.0f /s | %.0f /s / %.0f /s | %.2f s | %.1f %% | %.1f µs | %.1f %% |\n",
         shape, elapsed, sends / elapsed, pingsSent / elapsed, pongBytes / pongSize / elapsed,
         runTime / 1e9, runTime / 1e9 / elapsed * 100, runTime / 1e3 / sends,
         timerRunTime / 1e9 / elapsed * 100);
  return 0;
}
