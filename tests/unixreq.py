#!/usr/bin/env python3
"""A JSON-lines client of `shellgate serve`, for the shell tests (tests/redis.sh,
tests/bundle.sh): the requests are the lines of a file (data, never a shell's), the
answers go to standard output, one a line, in order.

usage: unixreq.py SOCKET REQUESTS_FILE      waits up to 30 s for the socket to answer;
                                            exit 1 when it never does or a line has no answer
"""
import socket
import sys
import time


def main():
    path, reqs = sys.argv[1], sys.argv[2]
    with open(reqs, "rb") as f:
        lines = [ln for ln in f.read().split(b"\n") if ln.strip()]
    s = None
    deadline = time.monotonic() + 30
    while s is None:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
        except OSError:
            s.close()
            s = None
            if time.monotonic() > deadline:
                print(f"unixreq: nothing answers on {path}", file=sys.stderr)
                return 1
            time.sleep(0.02)
    s.settimeout(30)
    f = s.makefile("rb")
    for ln in lines:                    # one at a time: each answer before the next request
        s.sendall(ln + b"\n")
        got = f.readline()
        if not got.endswith(b"\n"):
            print(f"unixreq: no answer to {ln[:200]!r}", file=sys.stderr)
            return 1
        sys.stdout.buffer.write(got)
        sys.stdout.flush()
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
