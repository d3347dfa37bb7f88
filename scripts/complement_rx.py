#!/usr/bin/env python3
"""complement_rx.py - the regexes of rule sets that name "every word but these".

The rule language has no negative lookahead and no set difference, so a set that
must match every word except a few (the templates of .env, the directories builds
make again) is written as the complement of a finite language, built here from a
trie: at each position, any byte no listed word continues with, or a byte some word
continues with followed by the complement of what may follow.  The output is the
text between the slashes of a `/.../` set item; paste it into the rule file and keep
the word list in the comment above it.

    python3 scripts/complement_rx.py env-templates     # std/sets secret_paths' .env item
    python3 scripts/complement_rx.py rm-generated      # default.rules rm_not_generated
    python3 scripts/complement_rx.py set-options       # default.rules nav: set's -o values

Each mode also checks its regex against sample words with Python's re before
printing it (exit 1 on a mismatch).  `complement_rx.py --check SRCDIR` (CTest
complement_rx) fails when a rule file no longer holds the regex made here.
"""
import re
import sys


def esc(c):
    return '\\' + c if c in '.[]()*+?{}|^$\\/-' else c


def cls(chars):
    return '[^%s]' % ''.join(esc(c) for c in sorted(chars))


def comp(words, prefixes=(), first_excl='', any_byte='.'):
    """A regex (no anchors) of the non-empty strings that are not in words, do
    not start with a prefix in prefixes, and do not start with a byte of
    first_excl.  any_byte is the class a free tail is made of."""
    words, prefixes = list(words), list(prefixes)
    firsts = sorted(set(w[0] for w in words + prefixes if w))
    alts = [cls(set(firsts) | set(first_excl)) + any_byte + '*']
    for c in firsts:
        if c in first_excl or c in prefixes:
            continue                        # a prefix ends here: nothing below it
        rw = [w[1:] for w in words if w and w[0] == c]
        rp = [p[1:] for p in prefixes if p and p[0] == c]
        nonempty = [r for r in rw if r]
        inner = comp(nonempty, rp, '', any_byte) if (nonempty or rp) else None
        if '' in rw:                        # c alone is a word: something must follow
            alts.append(esc(c) + ('(%s)' % inner if inner else any_byte + '+'))
        else:
            alts.append(esc(c) + ('(%s)?' % inner if inner else any_byte + '*'))
    return '|'.join(alts)


def env_templates():
    body = comp(['example', 'sample', 'template', 'dist'], any_byte='[^\\/]')
    rx = '\\/\\.env(\\.(%s))?$' % body.replace('[^', '[^\\/', 0)
    # the free tails must not cross a '/': exclude it from every negated class
    rx = re.sub(r'\[\^(?!\\/)', '[^\\\\/', rx)
    samples = {'/a/.env': True, '/a/.env.local': True, '/a/.env.example': False,
               '/a/.env.dist': False, '/a/.env.examples': True, '/a/.envrc': False}
    return rx, samples, True


GENERATED = ['node_modules', 'build', 'dist', 'target', 'out', 'coverage', '.next', '.nuxt', '.turbo',
             '.cache', '__pycache__', '.pytest_cache', '.mypy_cache', '.ruff_cache', '.tox', '.nox',
             '.venv', 'venv', '.parcel-cache', 'storybook-static', '.gradle', '.eggs', 'htmlcov',
             '.coverage', 'tmp', '.svelte-kit', '.angular', '.expo', 'cmake-build-debug',
             'cmake-build-release', '_build', '.dart_tool', '.build', 'DerivedData', '.terraform',
             '.nyc_output']


def rm_generated():
    words, prefixes = set(), set()
    for w in GENERATED:
        for p in ('', './'):
            words.add(p + w)
            prefixes.add(p + w + '/')
    rx = '^(%s)$' % comp(sorted(words), sorted(prefixes), '-')
    samples = {'build': False, './build/': False, 'target/debug': False, '-rf': False,
               'src': True, 'src/build': True, 'buildx': True, '.': True}
    return rx, samples, False


def set_options():
    rx = '^(%s)$' % comp(['pipefail', 'errexit', 'nounset', 'xtrace', 'verbose', 'errtrace'],
                         first_excl='-+')
    samples = {'pipefail': False, 'posix': True, '-e': False, 'nounset': False, 'x': True}
    return rx, samples, False


WHERE = {'env-templates': 'stdlib/sets.rules', 'rm-generated': 'rules/default.rules',
         'set-options': 'rules/default.rules'}


def check(srcdir):
    """Every regex made here is in its rule file as made (CTest complement_rx)."""
    import os
    failed = 0
    for name, fn in (('env-templates', env_templates), ('rm-generated', rm_generated),
                     ('set-options', set_options)):
        rx = fn()[0]
        with open(os.path.join(srcdir, WHERE[name]), encoding='utf-8') as f:
            if '/' + rx + '/' not in f.read():
                print('complement_rx.py: %s: %s no longer holds the regex this script makes'
                      % (name, WHERE[name]), file=sys.stderr)
                failed = 1
    return failed


def main():
    modes = {'env-templates': env_templates, 'rm-generated': rm_generated, 'set-options': set_options}
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        return check(sys.argv[2])
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        sys.exit('usage: complement_rx.py ' + '|'.join(modes))
    rx, samples, search = modes[sys.argv[1]]()
    py = re.compile(rx.replace('\\/', '/'))
    bad = [(w, want) for w, want in samples.items() if bool((py.search if search else py.match)(w)) != want]
    for w, want in bad:
        print('complement_rx.py: %r should %smatch' % (w, '' if want else 'not '), file=sys.stderr)
    print(rx)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
