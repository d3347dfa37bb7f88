"""shellgate - a Python client for the shell-command gate.

Gate(socket=PATH) talks to `shellgate serve --socket PATH`; Gate() without a
socket runs the CLI itself (one `shellgate check --batch` process kept open, so a
decision costs a line on a pipe, not a process).  Standard library only, Python
3.9 or later.

    from shellgate import Gate
    with Gate(policy="readonly") as gate:
        d = gate.check("git log --oneline", cwd="/home/me/project")
        if d.allowed:
            ...

Fail closed: a decision that cannot be had (the server is gone, the CLI cannot
start, an answer that cannot be read) is a deny whose `error` says why; check()
never raises for it and never allows.
"""
import itertools
import json
import os
import select
import shutil
import socket as _socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

__all__ = ["Gate", "Decision", "ShellgateError"]
__version__ = "0.9.0"


class ShellgateError(Exception):
    """An operation other than a decision failed (approve, reload, stats)."""


@dataclass
class Decision:
    """One decision: the JSON line `check --batch` answers, as fields."""
    decision: str                              # "allow", "deny" or "ask"
    rule: str = ""
    message: str = ""
    hint: str = ""
    approval_id: str = ""                      # set when decision == "ask"
    segments: List[Dict[str, Any]] = field(default_factory=list)
    rate_limited: bool = False
    wait_time_seconds: float = 0.0
    error: str = ""                            # why no real decision could be had
    raw: Dict[str, Any] = field(default_factory=dict)

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    @classmethod
    def from_json(cls, o: Dict[str, Any]) -> "Decision":
        d = o.get("decision")
        return cls(decision=d if d in ("allow", "deny", "ask") else "deny",
                   rule=o.get("rule", "") or "", message=o.get("message", "") or o.get("error", "") or "",
                   hint=o.get("hint", "") or "", approval_id=o.get("approval_id", "") or "",
                   segments=list(o.get("segments", []) or []), rate_limited=bool(o.get("rate_limited", False)),
                   wait_time_seconds=float(o.get("wait_time_seconds", 0) or 0), error=o.get("error", "") or "",
                   raw=o)

    @classmethod
    def failed(cls, why: str) -> "Decision":
        return cls(decision="deny", rule="error", message=why, error=why)


def _binary(shellgate: Optional[str]) -> str:
    return shellgate or os.environ.get("SHELLGATE") or shutil.which("shellgate") or "shellgate"


class Gate:
    """A gate: a server connection (socket) or a CLI process (policy)."""

    def __init__(self, socket: Optional[str] = None, policy: Optional[str] = None, *,
                 shellgate: Optional[str] = None, agent: Optional[str] = None, timeout: float = 30.0):
        if socket and policy:
            raise ValueError("the server has its policy: give socket or policy, not both")
        self.socket_path, self.policy, self.agent, self.timeout = socket, policy, agent, timeout
        self._bin = _binary(shellgate)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._sock = self._file = self._proc = None
        self._pending = b""

    # -- transport -------------------------------------------------------------------
    def _connect(self):
        if self.socket_path:
            if self._sock is None:
                s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                s.settimeout(self.timeout)
                try:
                    s.connect(self.socket_path)
                except OSError:
                    s.close()
                    raise
                self._sock, self._file = s, s.makefile("rb")
        elif self._proc is None or self._proc.poll() is not None:
            args = [self._bin, "check", "--batch"] + (["-p", self.policy] if self.policy else [])
            self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
            self._pending = b""

    def _proc_line(self) -> bytes:
        """The CLI's next answer line, waiting at most `timeout` seconds for it (a
        CLI that hangs is a failed decision, never a caller stuck for good)."""
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no answer from shellgate within {self.timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                return b""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line + b"\n"

    def _exchange(self, req: Dict[str, Any]) -> Dict[str, Any]:
        """Send one request, read its answer (the lock held)."""
        self._connect()
        if self.socket_path:
            rid = next(self._ids)
            self._sock.sendall((json.dumps(dict(req, id=rid)) + "\n").encode())
            line = self._file.readline()
        else:
            self._proc.stdin.write((json.dumps(req) + "\n").encode())
            self._proc.stdin.flush()
            line = self._proc_line()
        if not line:
            raise ConnectionError("shellgate closed the connection")
        o = json.loads(line)
        if not isinstance(o, dict) or (self.socket_path and o.get("id") != rid):
            raise ConnectionError("an answer out of order")
        o.pop("id", None)
        return o

    def _request(self, req: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            try:
                return self._exchange(req)
            except (OSError, ValueError) as e:
                self._drop()
                raise ConnectionError(str(e)) from e

    def _drop(self):
        for c in (self._file, self._sock):
            try:
                if c:
                    c.close()
            except OSError:
                pass
        self._file = self._sock = None
        if self._proc:
            try:
                self._proc.kill()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.SubprocessError):
                pass
            for pipe in (self._proc.stdin, self._proc.stdout):
                try:
                    if pipe:
                        pipe.close()
                except OSError:
                    pass
            self._proc = None

    # -- decisions -------------------------------------------------------------------
    def check(self, cmd: str, cwd: Optional[str] = None, *, agent: Optional[str] = None,
              session: Optional[str] = None, team: Optional[str] = None,
              roots: Optional[List[str]] = None) -> Decision:
        """Decide cmd as bash would run it in cwd (absolute; default: this process's).

        agent and session key the server's rate limits and approvals, team its
        limits declared `per team`; the CLI gate runs a pure check (no admission),
        where they do not apply."""
        req: Dict[str, Any] = {"op": "check", "cmd": cmd, "cwd": os.path.abspath(cwd or os.getcwd())}
        if roots:
            req["roots"] = [os.path.abspath(r) for r in roots]
        if self.socket_path:
            if agent or self.agent:
                req["agent"] = agent or self.agent
            if session:
                req["session"] = session
            if team:
                req["team"] = team
        else:
            req.pop("op")
        try:
            return Decision.from_json(self._request(req))
        except ConnectionError as e:
            return Decision.failed(f"shellgate: {e}")

    def explain(self, cmd: str, cwd: Optional[str] = None) -> Dict[str, Any]:
        """The decision with the rules each segment matched (server only)."""
        return self._op({"op": "explain", "cmd": cmd, "cwd": os.path.abspath(cwd or os.getcwd())})

    def approve(self, approval_id: str, scope: str = "once", session: Optional[str] = None) -> Dict[str, Any]:
        """Answer an ask (its approval_id) for "once" or "session" (server only)."""
        req = {"op": "approve", "approval_id": approval_id, "scope": scope}
        if session:
            req["session"] = session
        return self._op(req)

    def reload(self) -> Dict[str, Any]:
        return self._op({"op": "reload"})

    def stats(self) -> Dict[str, Any]:
        return self._op({"op": "stats"})

    def _op(self, req: Dict[str, Any]) -> Dict[str, Any]:
        if not self.socket_path:
            raise ShellgateError(f"{req['op']} needs a server: Gate(socket=...)")
        try:
            o = self._request(req)
        except ConnectionError as e:
            raise ShellgateError(str(e)) from e
        if o.get("ok") is False:
            raise ShellgateError(o.get("error", "failed"))
        return o

    def close(self):
        with self._lock:
            if self._proc and self._proc.stdin:
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=5)
                except (OSError, subprocess.SubprocessError):
                    pass
            self._drop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
