#!/usr/bin/env python3
"""braces.py - record tests/shparse/braces.txt from bash: for each line below, the
words bash makes of `printf '%s\n' WORDS` (its arguments after brace expansion).
Run from the repository root with bash 5.2: python3 tests/shparse/braces.py
Every line is a printf of literal words, so running it has no effect beyond the
output.  A parameter expansion after a brace group ({a,b}${x}) would be
expanded by bash: such lines are run with the '$' escaped, which keeps its text
as shellgate keeps it.  Braces inside an expansion (${x:-{a,b}}, $(echo {a,b}))
cannot be recorded so, since escaping the '$' changes what bash expands:
tests/test_shparse.c checks those.  HOME is "~" so a tilde stands as written.  Words with a quoted part are not
here: their braces are not expanded from the text (the evaluator reads such a
word's brace groups as wildcards instead)."""
import subprocess

LINES = r"""
x{a,b}y
{a,b}{c,d}
{a,{b,c}}
{{a,b}
a}b{c,d}
{a,b
{a}
{a,,b}
{,x}
a{,}b
{/,}
{1..5}
{5..1}
{01..03}
{-2..2}
{1..10..3}
{10..1..4}
{a..e}
{e..a}
{a..e..2}
{1..a}
{a..}
{+../}
{1..3}{a..b}
~/.{ssh,aws}/config
/etc/{passwd,shadow}
/e{tc,x}/sha{d,}ow
{/etc,~}/x{1,2}
src/{a,b}.c
x{a,b}{
{a,b}${x}
file{1..3}.txt
"""


def render(w):
    q = w == '' or any(ord(c) < 0x20 or ord(c) >= 0x7f or c in ' ,[]"\\@' for c in w)
    if not q:
        return w
    out = '"'
    for c in w:
        if c in '"\\':
            out += '\\' + c
        elif c == '\n':
            out += '\\n'
        elif c == '\t':
            out += '\\t'
        elif ord(c) < 0x20 or ord(c) >= 0x7f:
            out += '\\x%02x' % ord(c)
        else:
            out += c
    return out + '"'


def main():
    out = ['# braces.txt - brace expansion as bash 5.2 makes it (recorded by braces.py;',
           '# read by tests/test_shparse.c).  "> LINE", then "= WORDS" after its first two.', '']
    for w in LINES.strip('\n').split('\n'):
        line = "printf '%s\\n' " + w
        run = line.replace('$', '\\$')
        r = subprocess.run(['bash', '-c', run], capture_output=True, text=True, check=True,
                           env={'HOME': '~', 'PATH': '/usr/bin:/bin'})
        words = r.stdout.split('\n')[:-1]
        out.append('> ' + line)
        out.append('=' + ''.join(' ' + render(x) for x in words))
        out.append('')
    with open('tests/shparse/braces.txt', 'w') as f:
        f.write('\n'.join(out))


main()
