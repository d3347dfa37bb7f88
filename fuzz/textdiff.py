#!/usr/bin/env python3
"""Differential check of the normaliser's text marking.

Two packs differ only in text declarations: base declares the same value options
with no text; decl adds `text`, `text operand unless`, `permute`.  For random argv
of g (grep-like) and p (permute), with operands and values named /wK, `shellgate
explain` lists which /wK are path candidates (rule rK: ask path inside { /wK }).
Checked: decl's candidates are a subset of base's; every file the real program
(GNU getopt_long, permuting or POSIXLY_CORRECT) would open is a decl candidate;
every word decl drops is a text value or the pattern by that same parse.
Usage: python3 fuzz/textdiff.py [SHELLGATE [N [SEED]]]   (exit 1 on a finding)
"""
import random, re, subprocess, sys, tempfile

SG = sys.argv[1] if len(sys.argv) > 1 else './build/cli/shellgate'
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
NR = 40
TMP = tempfile.mkdtemp(prefix='textdiff.')
rules = ''.join(f'r{k}: ask path inside {{ /w{k} }} "{k}"\n' for k in range(NR))
head = 'default allow "ok"\n'
wr = 'use std/wrappers\n'
base = ('pack tb version 1\n' + wr + head +
        'command g { value { -f --file -e -k --key } }\n'
        'command p { value { -x } permute }\n' + rules)
decl = ('pack td version 1\n' + wr + head +
        'command g { value { -f --file } text { -e -k --key } text operand unless { -e -f --file } }\n'
        'command p { text { -x } permute }\n' + rules)
open(TMP + '/base.rules', 'w').write(base)
open(TMP + '/decl.rules', 'w').write(decl)

# the real programs: short options (':' = takes a value), long options (name -> takes a value)
PROG = {
    'g': ('arvnifek', set('fek'), {'file': True, 'key': True, 'fixed': False, 'kind': False}),
    'p': ('abx', set('x'), {}),
}

class Bad(Exception):
    pass

def getopt(prog, args, posix):
    """GNU getopt_long: returns (opts [(name, value, valueword_is_attached)], operands)."""
    shorts, hasarg, longs = PROG[prog]
    opts, ops = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == '--':
            ops += args[i + 1:]
            break
        if a.startswith('--'):
            name, eq, val = a[2:].partition('=')
            if name in longs:
                full = name
            else:
                c = [l for l in longs if l.startswith(name)]
                if len(c) != 1:
                    raise Bad(a)
                full = c[0]
            if longs[full]:
                if eq:
                    opts.append(('--' + full, val))
                elif i + 1 < len(args):
                    i += 1
                    opts.append(('--' + full, args[i]))
                else:
                    raise Bad(a)
            else:
                if eq:
                    raise Bad(a)
                opts.append(('--' + full, None))
        elif a.startswith('-') and len(a) > 1:
            k = 1
            while k < len(a):
                ch = a[k]
                if ch not in shorts:
                    raise Bad(a)
                if ch in hasarg:
                    if k + 1 < len(a):
                        opts.append(('-' + ch, a[k + 1:]))
                    elif i + 1 < len(args):
                        i += 1
                        opts.append(('-' + ch, args[i]))
                    else:
                        raise Bad(a)
                    break
                opts.append(('-' + ch, None))
                k += 1
        else:
            if posix:
                ops += args[i:]
                break
            ops.append(a)
        i += 1
    return opts, ops

def wid(w):
    m = re.fullmatch(r'/?w(\d+)', w or '')
    return int(m.group(1)) if m else None

def real_files(prog, opts, ops):
    files = set()
    if prog == 'g':
        given = any(o in ('-e', '-f', '--file') for o, _ in opts)
        files |= {wid(v) for o, v in opts if o in ('-f', '--file')}
        files |= {wid(w) for w in (ops if given else ops[1:])}
    else:
        files |= {wid(w) for w in ops}
    files.discard(None)
    return files

def text_words(prog, opts, ops):
    text = {wid(v) for o, v in opts if o in (('-e', '-k', '--key') if prog == 'g' else ('-x',))}
    if prog == 'g' and ops and not any(o in ('-e', '-f', '--file') for o, _ in opts):
        text.add(wid(ops[0]))
    text.discard(None)
    return text

def gen(prog, rnd):
    n = [0]
    def val():
        n[0] += 1
        return rnd.choice(['/w%d', 'w%d'])  % n[0]
    shorts = PROG[prog][0] + ('xw' if prog == 'g' else 'ef')
    longs = (['--file', '--fil', '--fi', '--f', '--key', '--ke', '--k', '--kind', '--fixed', '--fix']
             if prog == 'g' else ['--x', '--xx'])
    words = []
    for _ in range(rnd.randint(0, 7)):
        r = rnd.random()
        if r < 0.35:
            words.append(val())
        elif r < 0.7:
            cl = ''.join(rnd.choice(shorts) for _ in range(rnd.randint(1, 3)))
            w = '-' + cl
            if rnd.random() < 0.3:
                w += val()
            words.append(w)
        elif r < 0.9:
            w = rnd.choice(longs)
            if rnd.random() < 0.4:
                w += '=' + val()
            words.append(w)
        else:
            words.append(rnd.choice(['--', '-', '+x', '-%s' % val()]))
    return words

def cands(pack, line):
    out = subprocess.run([SG, 'explain', '-p', pack, '--cwd', '/', '--', line],
                         capture_output=True, text=True).stdout
    segs, cur = [], None
    for l in out.splitlines():
        m = re.match(r'\s*program: (\S*)', l)
        if m:
            cur = (m.group(1), set())
            segs.append(cur)
        m = re.search(r'matched: \w+\s+\S*:r(\d+)', l)
        if m and cur is not None:
            cur[1].add(int(m.group(1)))
    return segs

rnd = random.Random(SEED)
wraps = ['', '', '', 'sudo ', 'env A=1 ', 'nice -n 5 ', 'command ', 'timeout 5 ']
bad = tested = 0
for it in range(N):
    prog = rnd.choice('gp')
    words = gen(prog, rnd)
    wrap = rnd.choice(wraps)
    line = wrap + ' '.join([prog] + words)
    try:
        modes = [False] if prog == 'p' else [False, True]
        parses = [getopt(prog, words, posix) for posix in modes]
    except Bad:
        continue
    tested += 1
    sb = [s for s in cands(TMP + '/base.rules', line) if s[0] == prog]
    sd = [s for s in cands(TMP + '/decl.rules', line) if s[0] == prog]
    if not sb or not sd:
        print('NOSEG', line); bad += 1; continue
    b, d = sb[-1][1], sd[-1][1]
    msgs = []
    if not d <= b:
        msgs.append('decl adds %s' % sorted(d - b))
    for posix, (opts, ops) in zip(modes, parses):
        miss = real_files(prog, opts, ops) - d
        if miss:
            msgs.append('HIDDEN files %s (%s)' % (sorted(miss), 'posix' if posix else 'gnu'))
    opts, ops = parses[0]
    extra = (b - d) - text_words(prog, opts, ops)
    if extra:
        msgs.append('drops %s, no text value or pattern' % sorted(extra))
    if msgs:
        bad += 1
        print(line, '|', '; '.join(msgs), '| base', sorted(b), 'decl', sorted(d))
print('tested', tested, 'of', N, 'bad', bad)
sys.exit(1 if bad else 0)
