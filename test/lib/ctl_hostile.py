#!/usr/bin/env python3
"""ctl_hostile.py - misbehaving clients of the plugin's control socket, for
test/integration/plugin_ctl_hostile.sh.  Every mode is bounded in time.

  ctl_hostile.py SOCKET raw LINE...         send the lines, print the reply
  ctl_hostile.py SOCKET passfd FILE NAME    send `jobs NAME` with FILE's open
                                            descriptor attached, print the reply
  ctl_hostile.py SOCKET flood BYTES WAIT    send `topology` lines, never read;
                                            print what was sent, then how long
                                            until the plugin hung up (or WAIT)
  ctl_hostile.py SOCKET slow N WAIT         N clients, each sending one byte of
                                            a command every 5 s and never a
                                            newline; print how many the plugin
                                            closed within WAIT seconds
"""
import os
import select
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    return s


def read_all(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data.decode(errors="replace")
        data += chunk


def raw(path, lines):
    s = connect(path)
    s.sendall("".join(l + "\n" for l in lines).encode())
    s.shutdown(socket.SHUT_WR)
    sys.stdout.write(read_all(s))


def passfd(path, file, name):
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    s = connect(path)
    socket.send_fds(s, [("jobs %s\n" % name).encode()], [fd])
    s.shutdown(socket.SHUT_WR)
    sys.stdout.write(read_all(s))


def hung_up(s):
    """True once the plugin closed its end; reads nothing."""
    p = select.poll()
    p.register(s, 0)  # POLLHUP and POLLERR are always reported
    return any(ev & (select.POLLHUP | select.POLLERR) for _, ev in p.poll(0))


def flood(path, total, wait):
    s = connect(path)
    s.setblocking(False)
    chunk = b"topology\n" * 1024
    sent, start = 0, time.monotonic()
    while sent < total and time.monotonic() - start < 5:
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            break
    print("sent %d" % sent, flush=True)
    while time.monotonic() - start < wait:
        if hung_up(s):
            print("dropped after %.0f s" % (time.monotonic() - start), flush=True)
            return
        time.sleep(0.5)
    print("still connected after %d s" % wait, flush=True)


def slow(path, n, wait):
    socks = [connect(path) for _ in range(n)]
    closed = [None] * n
    start = time.monotonic()
    print("connected %d" % n, flush=True)
    step = 0
    while time.monotonic() - start < wait and None in closed:
        for i, s in enumerate(socks):
            if closed[i] is not None:
                continue
            try:
                if hung_up(s):
                    raise BrokenPipeError
                if step % 10 == 0:  # a byte every 5 s
                    s.send(b"status"[(step // 10) % 6:][:1])
            except OSError:
                closed[i] = time.monotonic() - start
        step += 1
        time.sleep(0.5)
    done = [t for t in closed if t is not None]
    print("closed %d of %d, last after %.0f s" % (len(done), n, max(done, default=0)),
          flush=True)


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "raw":
        raw(path, args)
    elif mode == "passfd":
        passfd(path, args[0], args[1])
    elif mode == "flood":
        flood(path, int(args[0]), float(args[1]))
    elif mode == "slow":
        slow(path, int(args[0]), float(args[1]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
