"""What the kernel alone charges a server for the many-rooms scenario's sends on this machine.

A bare sender (no WebSocket library, no rooms, no state) holds `rooms × peers` loopback TCP
connections and writes a 97-byte message (a tick's patch with its frame header) to the
`peers` connections of each room once a second, the rooms' sends spread evenly over the
second as the meetings' ticks are: 10 000 `send`s a second for 500 × 20, each to its own
socket, read by a separate process. The sender's *system* time is the kernel's part of
those sends — the TCP send path, and on loopback the receiving side's TCP work and wake-ups,
which run in the sender's context — the same work `standups-server` cannot avoid for the
same deliveries. Its user time is Python's and is not the point.

    .venv/bin/python Tests/Bench/send_floor.py --rooms 500 --peers 20 --seconds 90

Prints one Markdown row.
"""
import argparse
import os
import selectors
import socket
import sys
import time


def cpu(pid="self"):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def reader(listener_port, count, ready):
    """Child: opens `count` connections and reads everything, as one thread (like the bench)."""
    selector = selectors.DefaultSelector()
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", listener_port))
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
        sockets.append(s)
    os.write(ready, b"x")
    while True:
        for key, _ in selector.select():
            if not key.fileobj.recv(65536):
                return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--peers", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=90)
    arguments = parser.parse_args()
    count = arguments.rooms * arguments.peers

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    port = listener.getsockname()[1]
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:
        listener.close()
        reader(port, count, ready_write)
        os._exit(0)
    connections = []
    while len(connections) < count:
        connection, _ = listener.accept()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connections.append(connection)
    os.read(ready_read, 1)
    time.sleep(1)

    message = bytes([0x81, 95]) + b"x" * 95  # a 95-byte text frame: 97 bytes on the wire
    rooms = [connections[i:i + arguments.peers] for i in range(0, count, arguments.peers)]
    user_before, system_before = cpu()
    start = time.monotonic()
    for second in range(arguments.seconds):
        for index, room in enumerate(rooms):
            due = start + second + index / arguments.rooms
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for connection in room:
                connection.send(message)
    elapsed = time.monotonic() - start
    user, system = cpu()
    for connection in connections:
        connection.close()
    os.waitpid(child, 0)
    sends = arguments.seconds * count
    print("| rooms × peers | window | sends | sender's system time | of one core | per send |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(f"| {arguments.rooms} × {arguments.peers} | {elapsed:.0f} s | {sends / elapsed:.0f} /s | "
          f"{system - system_before:.2f} s | {(system - system_before) / elapsed * 100:.1f} % | "
          f"{(system - system_before) / sends * 1e6:.1f} µs |")
    print(f"(user time {user - user_before:.2f} s: Python's, not the kernel's)", file=sys.stderr)


if __name__ == "__main__":
    main()
