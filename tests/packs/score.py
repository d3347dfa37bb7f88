#!/usr/bin/env python3
"""score.py - how a pack decides a measuring corpus (tests/packs/default-day.cases,
tests/packs/readonly-programs.cases; docs/packs.md "Measured on the corpora").

    python3 tests/packs/score.py [--pack PACK] [--shellgate PATH] [--json] FILE.cases...

Runs every case of the corpus through `shellgate check --batch -p PACK` (JSON lines, one
process, argv lists - never a shell; cwd /home/agent/project, HOME=/home/agent, as in
`shellgate test`) and prints, per section and in total: how many lines were decided as
labelled, how many benign lines (label allow) were asked or denied, and how many
dangerous lines (label ask or deny) were allowed; then the lines decided otherwise.

A corpus is a case file (`command ; decision [; rule]`, split from the right on " ; ",
`#policy NAME` first, `#` comments) with sections and directives:
    # ---- TITLE            a section, up to the next one
    #expect PACK DECISION   from here to the end of the section, under PACK every line
                            is labelled DECISION (the labels on the lines are the
                            default pack's, or the #policy pack's)
    #tag WORD               from here to the end of the section, the lines carry WORD
                            (network, outside, writes: left out of the "base" total)
    #escapes                from here to the end of the section, "\\n" in a command is
                            a newline (here-documents)
    #malformed              from here to the end of the section, the commands are not
                            valid shell on purpose (--bash-n does not check them)
    #files PATH...          from here to the end of the section, the lines run in a
                            workspace that holds these (empty) files, made afresh in a
                            temporary directory (python3 -m app needs app/__main__.py)
A '#' directly followed by a letter is a directive and must be one of these.

Nothing is asserted by default (exit 0).  --min-agree, --max-benign-ask,
--max-benign-deny, --min-benign-allow, --no-dangerous-allowed and --max-dangerous-allowed
make a missed target
exit 1 (on the total, or on the base with --base; --section REGEX scores only the
sections whose title matches).  A malformed corpus, a shellgate that fails or answers
out of step, or a usage error exits 2.  --lint only reads and checks the files (with
--bash-n, also that bash parses every command).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CWD = "/home/agent/project"
HOME = "/home/agent"
DECISIONS = ("allow", "ask", "deny")
BASE_EXCLUDED = ("network", "outside", "writes")


class CorpusError(Exception):
    pass


class Case:
    __slots__ = ("file", "line", "section", "cmd", "label", "rule", "expect", "tags", "malformed",
                 "files")

    def __init__(self, file, line, section, cmd, label, rule, expect, tags, malformed, files=()):
        self.file, self.line, self.section = file, line, section
        self.cmd, self.label, self.rule = cmd, label, rule
        self.expect, self.tags, self.malformed = expect, tags, malformed
        self.files = files

    def label_for(self, labels):
        """(decision, rule) this case expects under the pack whose labels are `labels`."""
        if labels in self.expect:
            return self.expect[labels], None
        return self.label, self.rule


class Section:
    def __init__(self, file, line, title):
        self.file, self.line, self.title = file, line, title
        self.cases = []


def split_case(text):
    """'command ; decision [; rule]' -> (command, decision, rule or None), as cli/main.c
    split_case: from the right on " ; "; a last field that is no decision is the rule."""
    parts = text.split(" ; ")
    if len(parts) < 2:
        raise CorpusError("a case is 'command ; decision [; rule]'")
    last = parts[-1].strip()
    if last in DECISIONS:
        return " ; ".join(parts[:-1]).strip(), last, None
    if len(parts) >= 3 and parts[-2].strip() in DECISIONS:
        return " ; ".join(parts[:-2]).strip(), parts[-2].strip(), last
    raise CorpusError("expected allow, ask or deny where the decision goes")


def read_corpus(path):
    """The sections of one corpus file, its #policy (or None) and a list of errors."""
    sections, errors, policy = [], [], None
    sec = None
    expect, tags, escapes, malformed, files = {}, (), False, False, ()
    seen = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"{path}: cannot read: {e}")
    for n, raw in enumerate(lines, 1):
        t = raw.strip()
        where = f"{path}:{n}"
        if not t:
            continue
        if t.startswith("# ----"):
            title = t.strip("# -").strip() or "(untitled)"
            sec = Section(path, n, title)
            sections.append(sec)
            expect, tags, escapes, malformed, files = {}, (), False, False, ()
            continue
        if t.startswith("#"):
            m = re.match(r"#([A-Za-z][\w-]*)\s*(.*)$", t)
            if not m:
                continue                     # a comment
            word, rest = m.group(1), m.group(2).split()
            if word == "policy":
                if n != min(i for i, l in enumerate(lines, 1) if l.strip()):
                    errors.append(f"{where}: #policy must be the first line")
                elif len(rest) != 1:
                    errors.append(f"{where}: #policy takes one pack name")
                else:
                    policy = rest[0]
            elif word == "expect":
                if len(rest) != 2 or rest[1] not in DECISIONS:
                    errors.append(f"{where}: #expect PACK allow|ask|deny")
                else:
                    expect = dict(expect)
                    expect[rest[0]] = rest[1]
            elif word == "tag":
                if len(rest) != 1 or not re.fullmatch(r"[a-z][a-z0-9-]*", rest[0]):
                    errors.append(f"{where}: #tag takes one lower-case word")
                else:
                    tags = tuple(sorted(set(tags) | {rest[0]}))
            elif word == "escapes":
                if rest:
                    errors.append(f"{where}: #escapes takes no argument")
                escapes = True
            elif word == "files":
                bad = [f for f in rest if f.startswith("/") or ".." in f.split("/")]
                if not rest or bad:
                    errors.append(f"{where}: #files takes relative paths inside the workspace")
                else:
                    files = tuple(sorted(set(files) | set(rest)))
            elif word == "malformed":
                if rest:
                    errors.append(f"{where}: #malformed takes no argument")
                malformed = True
            else:
                errors.append(f"{where}: unknown directive '#{word}' "
                              "(policy, expect, tag, escapes, malformed, files; a comment is '# ...')")
            continue
        try:
            cmd, label, rule = split_case(t)
        except CorpusError as e:
            errors.append(f"{where}: {e}")
            continue
        if not cmd:
            errors.append(f"{where}: empty command")
            continue
        if escapes:
            cmd = cmd.replace("\\n", "\n")
        if "\0" in cmd:
            errors.append(f"{where}: NUL byte in the command")
            continue
        if cmd in seen:
            errors.append(f"{where}: the same command as line {seen[cmd]}")
            continue
        seen[cmd] = n
        if sec is None:
            sec = Section(path, n, "(before the first section)")
            sections.append(sec)
        sec.cases.append(Case(path, n, sec, cmd, label, rule, expect, tags, malformed, files))
    return sections, policy, errors


def run_shellgate(shellgate, pack, cases):
    """One batch run: the shellgate result object of each case, in order."""
    env = dict(os.environ, HOME=HOME)
    with tempfile.TemporaryDirectory(prefix="score-") as tmp:
        cwds = {}
        for c in cases:
            if c.files and c.files not in cwds:
                d = os.path.join(tmp, str(len(cwds)), "project")
                for f in c.files:
                    os.makedirs(os.path.dirname(os.path.join(d, f)), exist_ok=True)
                    open(os.path.join(d, f), "w").close()
                cwds[c.files] = d
        data = "".join(json.dumps({"cmd": c.cmd, "cwd": cwds.get(c.files, CWD)}) + "\n" for c in cases)
        try:
            p = subprocess.run([shellgate, "check", "-p", pack, "--batch"], input=data.encode(),
                               capture_output=True, env=env, check=False)
        except OSError as e:
            raise CorpusError(f"cannot run {shellgate}: {e}")
    if p.returncode != 0:
        raise CorpusError(f"{shellgate} check -p {pack} --batch exited {p.returncode}: "
                          + p.stderr.decode(errors="replace").strip())
    out = p.stdout.decode(errors="replace").splitlines()
    if len(out) != len(cases):
        raise CorpusError(f"{shellgate} answered {len(out)} lines for {len(cases)} commands")
    results = []
    for c, line in zip(cases, out):
        try:
            r = json.loads(line)
        except ValueError:
            raise CorpusError(f"{c.file}:{c.line}: shellgate answered no JSON: {line[:200]}")
        if r.get("decision") not in DECISIONS:
            raise CorpusError(f"{c.file}:{c.line}: shellgate answered no decision: {line[:200]}")
        results.append(r)
    return results


def rule_ok(want, got):
    """A rule is named by its full id or, within its pack, by its bare label
    (lib/shellgate.c sg_run_case)."""
    if not want or want == got:
        return True
    return ":" not in want and got.rsplit(":", 1)[-1] == want


class Tally:
    FIELDS = ("lines", "agree", "benign", "benign_ask", "benign_deny", "dangerous",
              "dangerous_allowed", "deny_asked")

    def __init__(self):
        for k in self.FIELDS:
            setattr(self, k, 0)

    def add(self, label, got, agreed):
        self.lines += 1
        self.agree += agreed
        if label == "allow":
            self.benign += 1
            self.benign_ask += got == "ask"
            self.benign_deny += got == "deny"
        else:
            self.dangerous += 1
            self.dangerous_allowed += got == "allow"
            self.deny_asked += label == "deny" and got == "ask"

    def pct(self, a, b):
        return 100.0 * a / b if b else 0.0

    def as_dict(self):
        d = {k: getattr(self, k) for k in self.FIELDS}
        d["agree_pct"] = round(self.pct(self.agree, self.lines), 2)
        d["benign_allow_pct"] = round(self.pct(self.benign - self.benign_ask - self.benign_deny,
                                               self.benign), 2)
        d["benign_ask_pct"] = round(self.pct(self.benign_ask, self.benign), 2)
        d["benign_deny_pct"] = round(self.pct(self.benign_deny, self.benign), 2)
        return d

    def row(self, name):
        return (f"{self.agree:5d}/{self.lines:<5d} {self.pct(self.agree, self.lines):6.1f}%"
                f"  {self.benign:5d} {self.benign_ask:5d} {self.benign_deny:5d}"
                f"  {self.dangerous:5d} {self.dangerous_allowed:5d} {self.deny_asked:5d}  {name}")


def bash_n_errors(cases):
    """Each case bash 5 cannot parse, as 'file:line: message'.  `bash -n` reads the
    command and executes nothing; the environment is empty (no BASH_ENV, no PATH) and
    no startup file is read."""
    bash = next((b for b in ("/bin/bash", "/usr/bin/bash") if os.access(b, os.X_OK)), None)
    if not bash:
        return ["score.py: --bash-n: no /bin/bash"]
    errors = []
    for c in cases:
        if c.malformed:
            continue
        p = subprocess.run([bash, "--norc", "--noprofile", "-n", "-c", c.cmd], env={},
                           capture_output=True, check=False, cwd="/")
        if p.returncode != 0 or p.stderr.strip():
            errors.append(f"{c.file}:{c.line}: bash -n: "
                          + p.stderr.decode(errors="replace").strip().replace("\n", " "))
    return errors


def default_shellgate():
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "cli", "shellgate")
    return os.path.normpath(built) if os.access(built, os.X_OK) else "shellgate"


def main(argv):
    ap = argparse.ArgumentParser(
        description="Score a pack on measuring corpora (see the top of this file).")
    ap.add_argument("files", nargs="+", metavar="FILE.cases")
    ap.add_argument("--pack", help="pack name or .rules/.sgt file (default: the first "
                    "file's #policy, else default)")
    ap.add_argument("--labels", help="whose #expect labels apply (default: the pack's name)")
    ap.add_argument("--shellgate", default=None, help="the shellgate binary "
                    "(default: build/cli/shellgate of this tree, else shellgate on PATH)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--quiet", action="store_true", help="do not list the lines decided otherwise")
    ap.add_argument("--lint", action="store_true", help="only read and check the files")
    ap.add_argument("--bash-n", action="store_true", help="with --lint: every command must "
                    "parse under `bash -n` (read, never executed; empty environment)")
    ap.add_argument("--exclude-tag", action="append", metavar="TAG",
                    help="left out of the base total (default: network, outside, writes)")
    ap.add_argument("--base", action="store_true", help="hold the targets on the base, not the total")
    ap.add_argument("--section", metavar="REGEX",
                    help="score only the sections whose title matches REGEX (Python re.search)")
    ap.add_argument("--min-agree", type=float, metavar="PCT")
    ap.add_argument("--max-benign-ask", type=float, metavar="PCT")
    ap.add_argument("--max-benign-deny", type=float, metavar="PCT")
    ap.add_argument("--min-benign-allow", type=float, metavar="PCT")
    ap.add_argument("--no-dangerous-allowed", action="store_true")
    ap.add_argument("--max-dangerous-allowed", type=int, metavar="N",
                    help="a floor that must not regress where the target (none) is not met yet")
    o = ap.parse_args(argv)

    sections, errors, policy = [], [], None
    for path in o.files:
        try:
            s, p, e = read_corpus(path)
        except CorpusError as ex:
            print(f"score.py: {ex}", file=sys.stderr)
            return 2
        sections += s
        errors += e
        policy = policy or p
    if o.section:
        try:
            want = re.compile(o.section)
        except re.error as e:
            print(f"score.py: --section: {e}", file=sys.stderr)
            return 2
        sections = [s for s in sections if want.search(s.title)]
    cases = [c for s in sections for c in s.cases]
    if not errors and not cases:
        errors.append("no cases in " + ", ".join(o.files)
                      + (f" in a section matching '{o.section}'" if o.section else ""))
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        print(f"score.py: {len(errors)} error(s)", file=sys.stderr)
        return 2
    if o.lint:
        if o.bash_n:
            bad = bash_n_errors(cases)
            for e in bad:
                print(e, file=sys.stderr)
            if bad:
                print(f"score.py: {len(bad)} command(s) bash does not parse", file=sys.stderr)
                return 2
        if not o.json:
            print(f"{len(cases)} cases in {len(sections)} sections: well formed")
        else:
            print(json.dumps({"cases": len(cases), "sections": len(sections)}))
        return 0

    pack = o.pack or policy or "default"
    labels = o.labels or re.sub(r"\.(rules|sgt)$", "", os.path.basename(pack))
    excluded = tuple(o.exclude_tag) if o.exclude_tag else BASE_EXCLUDED
    shellgate = o.shellgate or default_shellgate()
    try:
        results = run_shellgate(shellgate, pack, cases)
    except CorpusError as ex:
        print(f"score.py: {ex}", file=sys.stderr)
        return 2

    total, base = Tally(), Tally()
    per = {id(s): Tally() for s in sections}
    failures = []
    for c, r in zip(cases, results):
        want, want_rule = c.label_for(labels)
        got, got_rule = r["decision"], r.get("rule", "")
        agreed = got == want and rule_ok(want_rule, got_rule)
        for t in (total, per[id(c.section)]):
            t.add(want, got, agreed)
        if not set(c.tags) & set(excluded):
            base.add(want, got, agreed)
        if not agreed:
            failures.append({"file": c.file, "line": c.line, "section": c.section.title,
                             "cmd": c.cmd, "label": want, "rule": want_rule,
                             "got": got, "got_rule": got_rule,
                             "message": r.get("message", ""), "error": r.get("error")})

    scope, scope_name = (base, "base") if o.base else (total, "total")
    missed = []
    def check(flag, ok, text):
        if flag is not None and flag is not False and not ok:
            missed.append(text)
    check(o.min_agree, scope.pct(scope.agree, scope.lines) >= (o.min_agree or 0),
          f"{scope_name}: {scope.pct(scope.agree, scope.lines):.1f}% decided as labelled "
          f"< {o.min_agree}%")
    check(o.max_benign_ask, scope.pct(scope.benign_ask, scope.benign) <= (o.max_benign_ask or 0),
          f"{scope_name}: {scope.pct(scope.benign_ask, scope.benign):.1f}% of benign lines "
          f"asked > {o.max_benign_ask}%")
    check(o.max_benign_deny, scope.pct(scope.benign_deny, scope.benign) <= (o.max_benign_deny or 0),
          f"{scope_name}: {scope.pct(scope.benign_deny, scope.benign):.1f}% of benign lines "
          f"denied > {o.max_benign_deny}%")
    allowed = scope.benign - scope.benign_ask - scope.benign_deny
    check(o.min_benign_allow, scope.pct(allowed, scope.benign) >= (o.min_benign_allow or 0),
          f"{scope_name}: {scope.pct(allowed, scope.benign):.1f}% of benign lines allowed "
          f"< {o.min_benign_allow}%")
    check(o.no_dangerous_allowed, scope.dangerous_allowed == 0,
          f"{scope_name}: {scope.dangerous_allowed} dangerous line(s) allowed")
    check(o.max_dangerous_allowed, scope.dangerous_allowed <= (o.max_dangerous_allowed or 0),
          f"{scope_name}: {scope.dangerous_allowed} dangerous line(s) allowed > {o.max_dangerous_allowed}")

    has_tags = any(c.tags for c in cases)
    if o.json:
        out = {"pack": pack, "labels": labels, "files": o.files,
               "sections": [dict(file=s.file, line=s.line, title=s.title,
                                 tags=sorted({t for c in s.cases for t in c.tags}),
                                 **per[id(s)].as_dict()) for s in sections if s.cases],
               "total": total.as_dict(),
               "base": dict(excluded_tags=list(excluded), **base.as_dict()),
               "failures": failures,
               "targets": {"scope": scope_name, "met": not missed, "missed": missed}}
        print(json.dumps(out, indent=1))
    else:
        print(f"pack {pack} (labels: {labels}) on {', '.join(o.files)}")
        print(f"{'agree/lines':>11}  {'pct':>6}  {'benign':>5} {'asked':>5} {'denied':>5}"
              f"  {'dang.':>5} {'allow':>5} {'d>ask':>5}  section")
        for s in sections:
            if s.cases:
                tags = sorted({t for c in s.cases for t in c.tags})
                print(per[id(s)].row(s.title + (f" [{' '.join(tags)}]" if tags else "")))
        print(total.row("TOTAL"))
        if has_tags:
            print(base.row(f"BASE (without {', '.join(excluded)})"))
        for name, t in (("total", total), ("base", base)) if has_tags else (("total", total),):
            a = t.benign - t.benign_ask - t.benign_deny
            print(f"{name}: {t.pct(t.agree, t.lines):.1f}% decided as labelled; benign "
                  f"{t.pct(a, t.benign):.1f}% allowed, {t.pct(t.benign_ask, t.benign):.1f}% "
                  f"asked, {t.pct(t.benign_deny, t.benign):.1f}% denied; "
                  f"{t.dangerous_allowed} of {t.dangerous} dangerous lines allowed")
        if failures and not o.quiet:
            print(f"\ndecided otherwise ({len(failures)}):")
            for f in failures:
                want = f["label"] + (f" ({f['rule']})" if f["rule"] else "")
                print(f"{f['file']}:{f['line']}: {want} -> {f['got']} ({f['got_rule']})  "
                      + f["cmd"].replace("\n", "\\n"))
        for m in missed:
            print(f"target missed: {m}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
