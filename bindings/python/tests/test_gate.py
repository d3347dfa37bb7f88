"""The Python client against a real `shellgate serve` process and the CLI.

Run by CTest: SHELLGATE names the binary, PYTHONPATH the bindings."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from shellgate import Decision, Gate, ShellgateError

SG = os.environ["SHELLGATE"]
CWD = "/home/agent/project"


class ServerCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="sg-py-")
        cls.sock = os.path.join(cls.tmp.name, "sg.sock")
        env = dict(os.environ, HOME="/home/agent", XDG_STATE_HOME=os.path.join(cls.tmp.name, "xdg"),
                   XDG_CONFIG_HOME=os.path.join(cls.tmp.name, "cfg"))
        cls.proc = subprocess.Popen([SG, "serve", "--socket", cls.sock, "--approve", "--state",
                                     os.path.join(cls.tmp.name, "state")], env=env, stderr=subprocess.DEVNULL)
        # ready once it accepts a connection: the socket's name exists from bind(),
        # a moment before listen()
        for _ in range(1500):
            if os.path.exists(cls.sock):
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                        probe.connect(cls.sock)
                    break
                except OSError:
                    pass
            time.sleep(0.02)

    @classmethod
    def tearDownClass(cls):
        cls.proc.send_signal(signal.SIGTERM)
        cls.proc.wait(timeout=30)
        cls.tmp.cleanup()

    def test_allow_deny_ask(self):
        with Gate(socket=self.sock) as g:
            d = g.check("ls -la", cwd=CWD)
            self.assertIsInstance(d, Decision)
            self.assertTrue(d.allowed)
            self.assertEqual(d.segments[0]["argv"], ["ls", "-la"])
            d = g.check("rm -rf /", cwd=CWD)
            self.assertEqual((d.decision, d.rule), ("deny", "default:rm_root"))
            self.assertIn("refusing to delete '/'", d.message)
            d = g.check("git push origin main", cwd=CWD, agent="py", session="s")
            self.assertEqual(d.decision, "ask")
            self.assertEqual(len(d.approval_id), 32)

    def test_approve_then_allowed(self):
        with Gate(socket=self.sock, agent="py2") as g:
            d = g.check("git push origin feature", cwd=CWD, session="s2")
            self.assertEqual(d.decision, "ask")
            self.assertEqual(g.approve(d.approval_id, "once")["approved"], "git push origin feature")
            self.assertTrue(g.check("git push origin feature", cwd=CWD, session="s2").allowed)
            self.assertEqual(g.check("git push origin feature", cwd=CWD, session="s2").decision, "ask")
            with self.assertRaises(ShellgateError):
                g.approve("0" * 32)

    def test_explain_stats_reload(self):
        with Gate(socket=self.sock) as g:
            e = g.explain("cat x | sh", cwd=CWD)
            self.assertEqual(e["decision"], "deny")
            self.assertTrue(e["explain"])
            self.assertEqual(g.stats()["pack"], "default")
            self.assertEqual(g.reload()["pack"], "default")

    def test_threads_share_a_gate(self):
        with Gate(socket=self.sock) as g:
            bad = []

            def run(k):
                for i in range(200):
                    cmd, want = (("ls", "allow"), ("rm -rf ~", "deny"))[(i + k) % 2]
                    if g.check(cmd, cwd=CWD).decision != want:
                        bad.append((k, i))
            ts = [threading.Thread(target=run, args=(k,)) for k in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(bad, [])

    def test_docs_example(self):
        """The example of docs/integrations.md runs, against this server."""
        import contextlib
        import io
        doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "integrations.md")).read()
        code = doc.split("```python\n", 1)[1].split("```", 1)[0].replace("/run/shellgate.sock", self.sock)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "docs/integrations.md", "exec"), {})
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[-1], "True")
        self.assertIn("pushing publishes commits", lines[0])

    def test_server_gone_is_deny(self):
        g = Gate(socket=os.path.join(self.tmp.name, "nobody.sock"))
        d = g.check("ls", cwd=CWD)
        self.assertEqual(d.decision, "deny")
        self.assertTrue(d.error)


def start_server(path, tmp):
    proc = subprocess.Popen([SG, "serve", "--socket", path], stderr=subprocess.DEVNULL,
                            env=dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "xdg2")))
    for _ in range(1500):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.connect(path)
            return proc
        except OSError:
            time.sleep(0.02)
    return proc


class ReconnectCase(unittest.TestCase):
    def test_server_restarted(self):
        """A gate whose server went away answers deny, then decides again once a
        server is back on the socket (it reconnects; nothing to recreate)."""
        with tempfile.TemporaryDirectory(prefix="sg-py-re-") as tmp:
            path = os.path.join(tmp, "sg.sock")
            proc = start_server(path, tmp)
            with Gate(socket=path, timeout=10) as g:
                self.assertTrue(g.check("ls", cwd=CWD).allowed)
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
                d = g.check("ls", cwd=CWD)
                self.assertEqual(d.decision, "deny")
                self.assertTrue(d.error)
                proc = start_server(path, tmp)
                try:
                    self.assertTrue(g.check("ls", cwd=CWD).allowed)
                    self.assertEqual(g.check("rm -rf /", cwd=CWD).decision, "deny")
                finally:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=30)


class TeamCase(unittest.TestCase):
    def test_team_limit(self):
        """A limit declared per team holds across the team's agents, through the
        client's team argument, and leaves another team alone."""
        with tempfile.TemporaryDirectory(prefix="sg-py-team-") as tmp:
            rules = os.path.join(tmp, "t.rules")
            with open(rules, "w") as f:
                f.write("pack t version 1\ndefault allow\nlimit crew 2 per 1h per team\n")
            path = os.path.join(tmp, "sg.sock")
            proc = subprocess.Popen([SG, "serve", "--socket", path, "-p", rules, "--state",
                                     os.path.join(tmp, "state")], stderr=subprocess.DEVNULL,
                                    env=dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "xdg")))
            try:
                for _ in range(1500):
                    try:
                        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                            probe.connect(path)
                        break
                    except OSError:
                        time.sleep(0.02)
                with Gate(socket=path) as g:
                    got = [g.check("ls", cwd=CWD, agent=f"bot{i}", team="red") for i in range(3)]
                    self.assertEqual([d.allowed for d in got], [True, True, False])
                    self.assertTrue(got[2].rate_limited)
                    self.assertTrue(g.check("ls", cwd=CWD, agent="bot9", team="blue").allowed)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)


class CliCase(unittest.TestCase):
    def test_cli_hung_is_deny(self):
        """A CLI that never answers: the decision is a deny after the timeout,
        never a caller blocked for good."""
        with tempfile.TemporaryDirectory(prefix="sg-py-hang-") as tmp:
            fake = os.path.join(tmp, "shellgate")
            with open(fake, "w") as f:
                f.write("#!" + sys.executable + "\nimport sys, time\nsys.stdin.readline()\ntime.sleep(120)\n")
            os.chmod(fake, 0o755)
            t0 = time.monotonic()
            with Gate(policy="default", shellgate=fake, timeout=1.0) as g:
                d = g.check("ls", cwd=CWD)
            self.assertEqual(d.decision, "deny")
            self.assertIn("no answer from shellgate within 1 s", d.error)
            self.assertLess(time.monotonic() - t0, 30)


    def test_cli_gate(self):
        with Gate(policy="readonly", shellgate=SG) as g:
            self.assertTrue(g.check("git log --oneline", cwd=CWD).allowed)
            d = g.check("echo hi > notes.txt", cwd=CWD)
            self.assertEqual(d.decision, "deny")
            self.assertTrue(d.rule.startswith("readonly:"))
            with self.assertRaises(ShellgateError):
                g.stats()

    def test_cli_missing_binary_is_deny(self):
        with Gate(policy="readonly", shellgate="/nonexistent/shellgate") as g:
            self.assertEqual(g.check("ls", cwd=CWD).decision, "deny")

    def test_bad_policy_is_deny(self):
        with Gate(policy="no-such-pack", shellgate=SG) as g:
            d = g.check("ls", cwd=CWD)
            self.assertEqual(d.decision, "deny")
            self.assertTrue(d.error)


if __name__ == "__main__":
    unittest.main()
