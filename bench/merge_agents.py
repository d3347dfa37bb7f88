#!/usr/bin/env python3
"""merge_agents.py - put bench_agents' figures (hook_adapters, server) in their
places of results.json, leaving the rest of the file as bench_shellgate wrote it.

usage: merge_agents.py RESULTS.json AGENTS.json"""
import json
import re
import sys

path, agents = sys.argv[1], json.load(open(sys.argv[2]))
text = open(path).read()
for key, value in agents.items():
    body = json.dumps(value, separators=(", ", ": "))
    text, n = re.subn(r'("%s": )(null|\{.*\})(,?)$' % re.escape(key), lambda m: m.group(1) + body + m.group(3),
                      text, count=1, flags=re.M)
    if n != 1:
        sys.exit(f"merge_agents: no place for {key} in {path}")
json.loads(text)
open(path, "w").write(text)
