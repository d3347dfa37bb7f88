#!/usr/bin/env python3
"""snippet_rx.py - the regexes of the snippets an interpreter may run unasked.

Agents check a version or compute a value with a one-line snippet: python3 -c
'import sys; print(sys.version)', node -p 'process.versions.node', ruby -e 'puts
RUBY_VERSION', php -r 'echo PHP_VERSION;', perl -pi -e 's/a/b/g' FILES.  A gate
cannot run the code to see what it does, and a list of dangerous calls is never
complete, so the default pack admits a snippet only when all of it is spelled in
a small token grammar whose every token is harmless (rules/default.rules,
"snippets"):

- names a snippet may call are listed (print, len, sorted, ...), and so are the
  modules and objects whose listed attributes it may use (sys.version,
  os.path.join, console.log, process.versions.node): nothing unlisted is called or
  indexed, no exec, eval, open with two arguments, getattr, os.system,
  process.env, os.environ.values(), constructor.constructor, 'system'('id');
- any other module is only asked for its version or name, as a value given to a
  call (print(numpy.__version__)): a module's attributes may run anything when
  called (sh.find is the program find, execa.node runs node), and a required
  JavaScript module is never a value at all, only its data given straight to
  console.log, Object.keys or JSON.stringify (require('execa')('id') runs id);
- string literals have no escapes, no interpolation (no f-strings, no ${...},
  no #{...}, no $ in PHP) and no triple quotes, so where a string starts and ends
  is where the language says it does; no comments, regex literals, backticks,
  %x(), $-variables, newlines;
- two name tokens never touch (single letters must not spell exec), and where a
  language reads a bracket or a parenthesis after a value as an index or a call
  of a computed thing (JavaScript's x['constructor'], PHP's 'system'('id')), it
  may only open a list or a group;
- a file a snippet reads is a single string literal given to open() or
  require(); the runtime makes every string literal of a code option's value a
  path candidate (docs/language.md), so the rule's `not path outside workspace`
  and the secrets rules see it.

Each grammar is a small automaton over token classes (the states say what the
last token was: an operator, a value, a word), turned into one anchored regex by
state elimination, in the rule language's dialect (no blank: \\x20; no lookahead).

    python3 scripts/snippet_rx.py python|node|ruby|php|perl   # print one regex
    python3 scripts/snippet_rx.py --write SRCDIR               # write stdlib/snippets.rules
    python3 scripts/snippet_rx.py --check SRCDIR               # CTest snippet_rx
    python3 scripts/snippet_rx.py --shellgate SG               # CTest snippet_cases

Every mode first checks each regex with Python's re against the samples below
(what it must admit and what it must not); --check also fails when
stdlib/snippets.rules is not what --write makes, and --shellgate runs
every sample through `shellgate check --batch` with the default pack: each admitted
one is allowed, each other one is not.
"""
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile

SP = r'\x20'
NAME = r'[A-Za-z_][A-Za-z0-9_]*'


def alt(words):
    return '(' + '|'.join(sorted(set(words), key=lambda w: (-len(w), w))) + ')'


def lit(s):
    return ''.join('\\' + c if c in '.[]()*+?{}|^$\\/-' else c for c in s)


class Grammar:
    """Tokens (regex, states they may follow, state they lead to) over named
    states; the start state is 'O'; every state accepts."""

    def __init__(self, states):
        self.states = states
        self.edges = {}                    # (from, to) -> [regex]

    def tok(self, rx, after, to):
        for a in after:
            self.edges.setdefault((a, to), []).append(rx)

    def regex(self):
        # R_X = eps | sum_Y A[X][Y] R_Y; eliminate states one by one (Arden)
        A = {x: {} for x in self.states}
        for (a, b), rs in self.edges.items():
            A[a][b] = '(' + '|'.join(rs) + ')' if len(rs) > 1 else rs[0]
        C = {x: '' for x in self.states}   # '' stands for eps
        order = [s for s in self.states if s != 'O'] + ['O']
        for x in order:
            loop = A[x].pop(x, None)
            star = '(' + loop + ')*' if loop else ''
            for y in list(A[x]):
                A[x][y] = star + group(A[x][y])
            C[x] = star + group(C[x]) if C[x] else star
            if x == 'O':
                break
            for z in self.states:
                if z == x or x not in A[z]:
                    continue
                via = group(A[z].pop(x))
                for y, r in A[x].items():
                    add = via + r
                    A[z][y] = '(' + A[z][y] + '|' + add + ')' if y in A[z] else add
                tail = via + C[x] if C[x] else via
                C[z] = '(' + C[z] + '|' + tail + ')' if C[z] else '(' + tail + ')?'
        return '^' + C['O'] + '$'


def group(r):
    if not r:
        return r
    if re.fullmatch(r'\((?:[^()\\]|\\.)*\)', r) or re.fullmatch(r'\[[^\]]*\]', r):
        return r
    return '(' + r + ')'


# ---- Python ----------------------------------------------------------------------
PY_CALLS = ['print', 'len', 'sum', 'min', 'max', 'abs', 'round', 'sorted', 'reversed', 'range',
            'list', 'tuple', 'dict', 'set', 'frozenset', 'str', 'int', 'float', 'bool', 'complex',
            'repr', 'ascii', 'enumerate', 'zip', 'map', 'filter', 'any', 'all', 'chr', 'ord', 'hex',
            'bin', 'oct', 'divmod', 'pow', 'isinstance', 'hash', 'iter', 'next', 'slice',
            'True', 'False', 'None', 'and', 'or', 'not', 'in', 'is', 'if', 'else', 'for', 'lambda']
# single letters as names, but not the string prefixes b f r u (f'{...}' runs code)
PY_LETTERS = '[ac-eg-qstv-z]'
PY_ATTRS = ['version', 'version_info', '__version__', 'VERSION', '__file__', '__name__', 'major',
            'minor', 'micro', 'platform', 'executable', 'prefix', 'base_prefix', 'path', 'maxsize',
            'byteorder', 'implementation', 'name', 'cache_tag', 'python_version',
            'python_implementation', 'machine', 'release', 'architecture', 'node', 'processor',
            'cpu_count', 'getcwd', 'sep', 'linesep', 'pathsep', 'join', 'exists', 'isfile', 'isdir',
            'abspath', 'basename', 'dirname', 'splitext', 'relpath', 'normpath', 'realpath',
            'dumps', 'safe_load', 'upper', 'lower', 'strip', 'lstrip', 'rstrip', 'split',
            'splitlines', 'startswith', 'endswith', 'title', 'capitalize', 'zfill', 'ljust', 'rjust',
            'center', 'keys', 'values', 'items', 'sqrt', 'pi', 'floor', 'ceil', 'log', 'log2',
            'log10', 'exp', 'factorial', 'gcd', 'inf', 'isnan', 'now', 'today', 'utcnow',
            'isoformat', 'strftime', 'timestamp', 'year', 'month', 'day', 'hour', 'minute',
            'second', 'time', 'date', 'datetime', 'hexdigest', 'sha256', 'sha1', 'md5', 'encode',
            'count', 'index', 'find', 'rfind', 'append', 'extend', 'sort', 'reverse', 'exit']


PY_HEADS = ['sys', 'os', 'json', 'math', 'platform', 'datetime', 'time', 'hashlib', 'yaml', 'string',
            'shlex', 'statistics', 'textwrap']
# what any imported module may be asked for, as a value only (inside a call's
# parentheses): a module's attributes may run anything when called (sh.find is
# the program find), but these are its version and name
PY_VALUES = ['__version__', 'VERSION', 'version', '__file__', '__name__']


def python():
    s = r"""('[^'\\\x0a]+'|"[^"\\\x0a]+")"""           # no empty string: no triple quote
    attr = r'\.' + alt(PY_ATTRS)
    opn = r'open\(' + s + r'\)(\.read\(\)|\.readlines\(\))?'
    dotted = NAME + r'(\.' + NAME + ')*'
    # Tokens by their first and last byte: a word token (starts with a name
    # byte) never follows one that ends with a name byte (letters must not
    # spell exec; an f before a quote is an f-string).  So the snippet is a run
    # of tokens that end in a non-name byte, each but the first possibly after
    # a word and its attributes.
    # (a listed call or a letter may take attributes too: a variable holds only
    # what listed tokens make; a listed module must)
    fw_w = ('(' + alt(PY_CALLS) + '|' + PY_LETTERS + '|' + alt(PY_HEADS) + attr
            + '|[0-9]+(\\.[0-9]+)?|import' + SP + '+' + dotted + '(' + SP + '*,' + SP + '*' + dotted
            + ')*)')
    fw_o = ('(' + NAME + r'\.' + alt(PY_VALUES) + SP + '*[),]'      # any module's version, as a value
            + r'|(json\.load|yaml\.safe_load)\(' + opn + r'\)'
            + '|' + NAME + SP + '*='                                # keyword argument, assignment
            + '|' + opn + ')')
    fo_w = attr
    fo_o = '(' + s + r'|[-+*/%<>=!~^&|,:;()\[\]{}]|' + SP + ')'
    after_word = '(' + fw_w + '|' + fo_w + ')(' + fo_w + ')*'
    return '^(' + fo_o + '|' + fw_o + '|' + after_word + fo_o + ')*(' + after_word + ')?$'


PY_YES = ["print(2**20)", "import sys; print(sys.version)", "import sys;print(sys.version_info[:2])",
          "import numpy; print(numpy.__version__)", "import app; print(app.__version__)",
          "print(sum(range(10)))", "print([i*i for i in range(5)])", "print(len('hello'))",
          "import json; print(json.load(open('package.json'))['version'])",
          "import yaml; yaml.safe_load(open('.github/workflows/ci.yml')); print('ok')",
          "import os; print(os.cpu_count())", "import platform; print(platform.python_version())",
          "print(open('VERSION').read().strip())", "import math; print(math.sqrt(2))",
          "print(sorted(['b', 'a'], key=lambda x: x))", "x = 3; print(x * 2)",
          "print('a', 'b', sep=',')", "import datetime; print(datetime.datetime.now().isoformat())",
          "import os.path, sys; print(os.path.join('a', 'b'))", "print(1 if 2 > 1 else 0)",
          "print(\"don't\")", "import hashlib; print(hashlib.sha256('x'.encode()).hexdigest())"]
PY_NO = ["import os; os.system('id')", "exec('print(1)')", "eval('1')", "__import__('os')",
         "print(f'{1}')", "print(open('x', 'w'))", "import os; print(os.environ)",
         "import posix; print(posix.environ.values())", "import sys; print(sys.modules['os'])",
         "print(''' x ''')", "print('a' 'b' '''c''')", "open('x').write('y')", "import os as print",
         "from os import system", "print(().__class__.__bases__[0].__subclasses__())",
         "import subprocess; subprocess.run(['id'])", "print(getattr(print, '__self__'))",
         "print(1) # x", "print('\\x41')", "print(ex)", "print(exec)", "x = open; x('f')",
         "import pickle; pickle.loads(b'')", "import yaml; yaml.load('x')",
         "import jsonpickle; jsonpickle.decode('{}')", "breakpoint()", "input()", "help()",
         "print(b'x')", "print(rb'x')", "print(u'x')", "import shutil; shutil.rmtree('.')",
         "import os; os.remove('x')", "import webbrowser; webbrowser.open('http://x')",
         "print(open('a' + 'b').read())", "print(1)\nimport os", "print(vars())",
         "import sh; sh.find('/', '-delete')", "import sh; print(sh.version())", "import sh; sh.node('-e', 'x')",
         "import pickle; print(pickle.load(open('x')))", "import yaml; print(yaml.load(open('x')))",
         "import app; app.__version__()", "import app; print(app.version (1))", "print(app.versionx(1))"]

# ---- JavaScript (node -e, -p) -------------------------------------------------------
JS_CALLS = ['parseInt', 'parseFloat', 'Number', 'String', 'Boolean', 'Array', 'Date', 'isNaN',
            'isFinite']
JS_VALUES = ['true', 'false', 'null', 'undefined', 'NaN', 'Infinity', 'typeof', 'new', 'let', 'const',
             'var', 'of', 'in', 'instanceof']
JS_ATTRS = ['log', 'error', 'info', 'warn', 'table', 'dir', 'version', 'versions', 'node', 'v8',
            'platform', 'arch', 'release', 'pid', 'uptime', 'cwd', 'execPath', 'argv', 'title',
            'memoryUsage', 'exit', 'stringify', 'parse', 'now', 'toISOString', 'toString',
            'toFixed', 'getTime', 'getFullYear', 'length', 'map', 'filter', 'reduce', 'join',
            'split', 'keys', 'values', 'entries', 'from', 'isArray', 'includes', 'indexOf',
            'slice', 'trim', 'toUpperCase', 'toLowerCase', 'startsWith', 'endsWith', 'padStart',
            'padEnd', 'repeat', 'concat', 'sort', 'reverse', 'push', 'floor', 'ceil', 'round',
            'abs', 'max', 'min', 'sqrt', 'pow', 'random', 'PI', 'name', 'scripts', 'dependencies',
            'devDependencies', 'peerDependencies', 'engines', 'main', 'type', 'bin', 'workspaces',
            'cpus', 'totalmem', 'freemem', 'hostname', 'tmpdir', 'EOL', 'sep', 'basename',
            'dirname', 'extname', 'modules', 'openssl', 'uv', 'icu', 'unicode', 'tz']


JS_HEADS = ['console', 'process', 'Object', 'Array', 'JSON', 'Math', 'Date', 'Number', 'String',
            'Boolean', 'Deno']
# what a package's manifest or any module may be asked for, as data only
JS_DATA = ['version', 'name', 'scripts', 'dependencies', 'devDependencies', 'peerDependencies',
           'optionalDependencies', 'engines', 'main', 'module', 'type', 'bin', 'workspaces',
           'description', 'license', 'private', 'packageManager', 'files', 'keywords']


def node():
    s = r"""('[^'\\\x0a]*'|"[^"\\\x0a]*")"""
    attrs = [a for a in JS_ATTRS if a != 'node'] + [r'versions\.node']   # execa.node runs node
    attr = r'\.' + alt(attrs)
    req = r'require\(' + s + r'\)(\.' + alt(JS_DATA) + ')*'
    # The tokens by what may follow them: after an operator (or an opening
    # bracket) anything; after something listed as callable (C: print, x.join)
    # an attribute, a string, a closing bracket, a blank, an operator or '(';
    # after a word that is a value (V: a letter, a number, true) the same but
    # '(' (letters must not spell process, and nothing computed is called);
    # after any other value or a blank (E) a word too, but no '(' or '['
    # (x['constructor'], (f)('id')).  A required module is never a value: only
    # its data, given straight to console.log, Object.keys or JSON.stringify (a
    # module's function may run anything: require('execa')('id')).  Written as
    # units that each end in an operator, so the regex stays small.
    fo_c = attr                                                  # -> C
    fo_e = '(' + s + r'|[)\]}]|' + SP + ')'                      # -> E
    heads = '(' + alt(JS_HEADS) + '|' + r"require\(('os'|\"os\")\)" + ')'
    fw_v = '(' + alt(JS_VALUES) + '|[a-z]|[0-9]+(\\.[0-9]+)?)'  # -> V (with attributes: C)
    fw_e = r'(console\.log|Object\.keys|JSON\.stringify)\(' + req + r'\)'   # -> E
    ops = r'[-+*%<>=!~^&|,:;?{]' + SP + '*'
    x = '(' + alt(JS_CALLS) + '|' + heads + fo_c + '|' + fo_c + ')(' + fo_c + ')*'   # ends after C
    loop = '(' + fw_e + '|' + fo_e + '|(' + x + '|' + fw_v + '(' + fo_c + ')*)' + fo_e + ')'   # E -> E
    unit = ('(' + r'[-+*%<>=!~^&|,:;?{(\[]' + SP + '*|' + loop + '*(' + ops + '|' + x + '(' + ops + r'|\('
            + SP + '*)|' + fw_v + '((' + fo_c + ')+(' + ops + r'|\(' + SP + '*)|' + ops + ')))')
    return '^' + SP + '*' + unit + '*' + loop + '*(' + x + '|' + fw_v + '(' + fo_c + ')*)?$'


def node_require():
    """A snippet that is one require() of a module's data (node -p)."""
    s = r"""('[^'\\\x0a]*'|"[^"\\\x0a]*")"""
    return '^require\\(' + s + r'\)(\.' + alt(JS_DATA) + ')*$'


JS_YES = ["process.versions.node", "console.log(process.version)", "console.log(1+2)",
          "require('./package.json').version", "console.log(require('./package.json').version)",
          "require(\"./package.json\").scripts", "console.log(new Date().toISOString())",
          "console.log([1, 2, 3].map(x => x * 2))", "console.log(require('os').cpus().length)",
          "JSON.stringify(require('./package.json').dependencies)", "Math.max(1, 2)",
          "console.log(Object.keys(require('./package.json').scripts).join(', '))",
          "process.platform + ' ' + process.arch", "const a = [1,2]; console.log(a.length)"]
JS_NO = ["require('child_process').execSync('id')", "process.env", "console.log(process.env)",
         "[]['constructor']['constructor']('return 1')()", "x['constructor']",
         "this.constructor.constructor('x')()", "Function('x')()", "eval('1')",
         "console.log(`${1}`)", "console.log(/'/)", "x = 1 // c", "require('fs').readFileSync('x')",
         "({})['constructor']", "a [0]", "import('fs')", "process.binding('fs')",
         "global.process.mainModule.require('child_process')", "console.log('\\x41')",
         "process['env']", "x?.['constructor']", "console.log($)", "...x", "ab",
         "require('execa')('id')", "(require('execa'))('id')", "[require('x')].map(f => f('id'))",
         "require('execa').node('-e', 'x')", "const a = require('x').bin; a('id')", "x('id')",
         "require('x').bin.sort()", "console.log(process)", "Object.entries(process)",
         "(x => x)(1)", "globalThis.process.env", "setTimeout('x')"]

# ---- Ruby (ruby -e) -------------------------------------------------------------------
RB_CALLS = ['puts', 'p', 'print', 'pp', 'RUBY_VERSION', 'RUBY_PLATFORM', 'RUBY_ENGINE',
            'RUBY_ENGINE_VERSION', 'RUBY_PATCHLEVEL', 'RUBY_RELEASE_DATE', 'RUBY_COPYRIGHT', 'true',
            'false', 'nil', 'Time', 'Math', 'JSON', 'Integer', 'Float']
RB_ATTRS = ['now', 'year', 'month', 'day', 'to_s', 'to_i', 'to_f', 'to_a', 'length', 'size',
            'upcase', 'downcase', 'capitalize', 'reverse', 'sum', 'max', 'min', 'sort', 'uniq', 'join',
            'split', 'strip', 'round', 'floor', 'ceil', 'inspect', 'sqrt', 'keys', 'values', 'first',
            'last', 'count', 'map', 'each', 'select', 'times', 'succ', 'abs', 'iso8601', 'strftime',
            'pretty_generate', 'generate', 'parse', 'to_json', 'PI', 'include?', 'empty?', 'nil?',
            'zero?', 'even?', 'odd?']


def ruby():
    s = r"""('[^'\\\x0a]*'|"[^"\\#\x0a]*")"""
    attr = r'\.' + alt([lit(a) for a in RB_ATTRS])
    g = Grammar(['O', 'W'])
    N, ANY = ['O'], ['O', 'W']
    g.tok('(' + alt(RB_CALLS) + '|[a-z])', N, 'W')
    g.tok('[0-9]+(\\.[0-9]+)?', N, 'W')
    g.tok('require' + SP + '*' + s, N, 'O')
    g.tok(s, N, 'O')
    g.tok(attr, ANY, 'W')
    g.tok(r'[-+*<>=!~^&|,;()\[\]{}]', ANY, 'O')
    g.tok(SP + '+', ANY, 'O')
    return g.regex()


RB_YES = ["puts RUBY_VERSION", "puts 1+1", "p [1, 2, 3].map { |x| x * 2 }", "puts Time.now",
          "require 'json'; puts JSON.generate([1])", "print RUBY_PLATFORM, 10"]
RB_NO = ["system('id')", "`id`", "%x(id)", "puts ENV.to_h", "puts ENV.values", "p ENV",
         "puts \"#{1}\"", "exec 'id'", "open('|id')", "Kernel.system('id')", "eval('1')",
         "[1].each(&:system)", "puts $0", "IO.popen('id')", "File.read('/etc/shadow')",
         "s = 'x'; s.send(:system)", "puts 1 # c", "puts /x/"]

# ---- PHP (php -r) ---------------------------------------------------------------------
PHP_CALLS = ['echo', 'print', 'PHP_VERSION', 'PHP_EOL', 'PHP_OS', 'PHP_OS_FAMILY', 'PHP_INT_MAX',
             'PHP_INT_SIZE', 'PHP_MAJOR_VERSION', 'PHP_MINOR_VERSION', 'PHP_RELEASE_VERSION',
             'PHP_VERSION_ID', 'PHP_BINARY', 'PHP_SAPI', 'phpversion', 'php_uname', 'php_sapi_name',
             'json_encode', 'var_dump', 'print_r', 'var_export', 'count', 'strlen', 'strtoupper',
             'strtolower', 'ucfirst', 'implode', 'explode', 'max', 'min', 'array', 'true', 'false',
             'null', 'extension_loaded', 'get_loaded_extensions', 'round', 'floor', 'ceil', 'abs',
             'sqrt', 'pow', 'intdiv', 'date', 'time', 'microtime', 'str_repeat', 'str_pad',
             'number_format', 'sprintf', 'printf']


def php():
    s = r"""('[^'\\\x0a]*'|"[^"\\\x24{\x0a]*")"""
    # O: after an operator; W: right after a listed name; V: after a value or a
    # blank: '(' only right after a listed name or an operator, so nothing
    # computed is called ('system'('id'), ('sys'.'tem')('id'))
    g = Grammar(['O', 'W', 'V'])
    g.tok(alt(PHP_CALLS), ['O', 'V'], 'W')
    g.tok('[0-9]+(\\.[0-9]+)?', ['O', 'V'], 'V')
    g.tok(s, ['O', 'V'], 'V')
    g.tok(r'\(', ['O', 'W'], 'O')
    g.tok(r'[)\]]', ['O', 'W', 'V'], 'V')
    g.tok(r'[-+*<>=!~^&|,;.\[]', ['O', 'W', 'V'], 'O')
    g.tok(SP + '+', ['O'], 'O')
    g.tok(SP + '+', ['W', 'V'], 'V')
    return g.regex()


PHP_YES = ["echo PHP_VERSION, PHP_EOL;", "echo PHP_VERSION;", "echo phpversion();",
           "print_r(get_loaded_extensions());", "echo 1+1;", "var_dump(extension_loaded('curl'));",
           "echo json_encode(array(1, 2));"]
PHP_NO = ["system('id');", "'system'('id');", "('sys'.'tem')('id');", "['system'][0]('id');",
          "echo `id`;", "echo $x;", "echo getenv('HOME');", "phpinfo();", "eval('1');",
          "echo \"{$x}\";", "array_map('system', array('id'));", "echo 1; // x",
          "echo 'a' ('b');", "\\system('id');", "echo shell_exec('id');", "echo (1);"]

# ---- perl -pi -e 's/PAT/REPL/FLAGS' ---------------------------------------------------


def perl():
    # A pattern may hold any byte but / $ @ { } and newline, or an escaped one;
    # a $ only as its end anchor.  (?{ }) and (??{ }) need a brace, @{[ ]} and
    # ${\ } interpolation a sigil.  A replacement holds no [ { @ and $ only as a
    # numbered group ($1: $1[...] and $1->[...] need a bracket); no e flag (no code).
    # A {m,n} quantifier only after an atom that is not '?' ((?{ is a code block).
    pat = r'(([^\/\\\x24@{}?\x0a]|\\[^\x0a])(\{[0-9]+(,[0-9]*)?\})?|\?)*(\x24)?'
    rep = r'([^\/\\\x24@{}\[\x0a]|\\[^\x0a]|\x24[0-9]+)*'
    tr = r'[^\/\\\x0a]*'
    return '^(s\\/' + pat + '\\/' + rep + '\\/[gimsx]*|(tr|y)\\/' + tr + '\\/' + tr + '\\/[cdsr]*)$'


PERL_YES = ["s/foo/bar/g", "s/\\bfoo\\b/bar/g", "s/\\s+$//", "s/(\\w+)=(\\d+)/$1: $2/",
            "s/version = \"1\"/version = \"2\"/", "tr/a-z/A-Z/", "s/a\\/b/c/", "s/\\n{3,}/\\n\\n/g",
            "s/(ab){2}/x/", "s/a?b/c/"]
PERL_NO = ["s/x/system('id')/e", "s/x/@{[ `id` ]}/", "s/x/${\\ `id`}/", "s/(?{ system('id') })//",
           "s/x/$1[`id`]/", "s/x/$x/", "system('id')", "s/a/b/; system('id')", "s/a/b/ge",
           "s/@{[1]}/x/", "s/x/$1->[0]/", "s/a$b/c/", "s/\na/b/", "s/(?{3})//", "s/a(??{1})//",
           "s/\\N{U+41}//", "s/x{a}/y/"]

LANGS = {
    'python': (python, PY_YES, PY_NO, ['python3', '-c']),
    'node': (lambda: [node_require(), node()], JS_YES, JS_NO, ['node', '-p']),
    'ruby': (ruby, RB_YES, RB_NO, ['ruby', '-e']),
    'php': (php, PHP_YES, PHP_NO, ['php', '-r']),
    'perl': (perl, PERL_YES, PERL_NO, ['perl', '-pi', '-e']),
}


def rule_rx(rx):
    """In the rule language's /.../: every / escaped, no blank."""
    assert ' ' not in rx and '\n' not in rx
    out, i = [], 0
    while i < len(rx):
        if rx[i] == '\\':
            out.append(rx[i:i + 2])
            i += 2
            continue
        out.append('\\/' if rx[i] == '/' else rx[i])
        i += 1
    return ''.join(out)


class Any:
    """The set's regexes, as one matcher: a word matches the set when one matches."""

    def __init__(self, rxs):
        self.rxs = [re.compile(rule_rx(r)) for r in rxs]

    def match(self, w):
        return any(r.match(w) for r in self.rxs)


def regexes(name):
    r = LANGS[name][0]()
    return r if isinstance(r, list) else [r]


def self_check(name):
    _, yes, no, _ = LANGS[name]
    rxs = regexes(name)
    pyrx = Any(rxs)
    bad = [s for s in yes if not pyrx.match(s)] + [s for s in no if pyrx.match(s)]
    for s in bad:
        print('%s: %r is %s' % (name, s, 'refused' if s in yes else 'admitted'), file=sys.stderr)
    return rxs, not bad


SETS = {
    'python': 'python_snippet', 'node': 'node_snippet', 'ruby': 'ruby_snippet', 'php': 'php_snippet',
    'perl': 'perl_substitution',
}
WHAT = {
    'python': "python3 -c CODE: listed calls (print, len, sorted, ...), listed modules before\n"
              "# listed attributes (sys.version, os.path.join), any module's version only as a\n"
              "# value (print(numpy.__version__)), import NAME,\n"
              "# open('FILE') (.read(), json.load, yaml.safe_load of it), literals with no\n"
              "# escapes, prefixes or triple quotes",
    'node': "node -e/-p CODE: listed calls and values, listed objects before listed\n"
            "# attributes (console.log, process.versions.node), a module's data only given to\n"
            "# console.log, Object.keys or JSON.stringify (or alone: require('./package.json')\n"
            "# .version), literals with no escapes or templates, no call or index of a value",
    'ruby': "ruby -e CODE: listed calls and constants (puts, p, RUBY_VERSION, Time.now),\n"
            "# listed methods, require 'LIB', literals with no escapes or #{}",
    'php': "php -r CODE: listed functions and constants (echo, PHP_VERSION, phpversion()),\n"
           "# literals with no escapes or $, and '(' only after a listed name or an operator",
    'perl': "perl -pi -e SCRIPT: one s/PATTERN/REPLACEMENT/FLAGS (no e flag, no code\n"
            "# blocks or interpolation but $1..$9) or tr/// (y///)",
}


def stdlib_text():
    out = ['# std/snippets - what a one-line snippet given to an interpreter may say and still',
           '# only compute and print.  MADE BY scripts/snippet_rx.py --write: edit the script',
           '# (its docstring says how each grammar is built and why each token is harmless),',
           '# not this file; CTest snippet_rx fails when the two differ.',
           'pack std.snippets version 1', '']
    ok = True
    for name in LANGS:
        rxs, good = self_check(name)
        ok = ok and good
        out.append('# ' + WHAT[name])
        out.append('set %s = { %s }' % (SETS[name], ' '.join('/%s/' % rule_rx(r) for r in rxs)))
        out.append('')
    return '\n'.join(out), ok


MUTANTS = 1500
SPLICE = ["__import__('os').system('id')", "exec('1')", "`id`", "$(id)", "${x}", "#{x}", "'''",
          "\\", "\n", "//", "/*", "[", "](", ")(", "'system'", "f'", ".constructor", "os.environ",
          "process.env", "ENV", "%x(", "$", "@{[", "(?{", "/e", "; system 'id'", " ", "'", '"']
ALPHABET = "abefrux_.()[]{}'\"`$#@%/\\;:=,+-*<>!?|&^~ \n0123456789"


def mutate(rng, s):
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, len(s))
        op = rng.random()
        if op < 0.3 and s:
            s = s[:i] + s[i + 1:]
        elif op < 0.6:
            s = s[:i] + rng.choice(ALPHABET) + s[i:]
        elif op < 0.8 and s:
            s = s[:i] + rng.choice(ALPHABET) + s[i + 1:]
        else:
            s = s[:i] + rng.choice(SPLICE) + s[i:]
    return s


def main(argv):
    if len(argv) == 2 and argv[1] in LANGS:
        rxs, ok = self_check(argv[1])
        if not ok:
            return 1
        for rx in rxs:
            print(rule_rx(rx))
        return 0
    if len(argv) == 3 and argv[1] in ('--check', '--write'):
        path = os.path.join(argv[2], 'stdlib', 'snippets.rules')
        text, ok = stdlib_text()
        if not ok:
            return 1
        if argv[1] == '--write':
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            return 0
        try:
            have = open(path, encoding='utf-8').read()
        except OSError as e:
            print('%s: %s' % (path, e), file=sys.stderr)
            return 1
        if have != text:
            print('stdlib/snippets.rules is not what scripts/snippet_rx.py --write makes: '
                  'edit the script, not the file, and run it', file=sys.stderr)
            return 1
        return 0
    if len(argv) == 3 and argv[1] == '--shellgate':
        lines, want = [], []
        mutants = []                       # (argv, the grammar admits it)
        rng = random.Random(1)
        for name, (fn, yes, no, cmd) in LANGS.items():
            rxs, _ = self_check(name)
            pyrx = Any(rxs)
            files = ['lib/a.pm'] if name == 'perl' else []
            for s, w in [(s, True) for s in yes] + [(s, False) for s in no]:
                lines.append(cmd + [s] + files)
                want.append(w)
            # mutants of every sample: bytes inserted, deleted or replaced, and
            # dangerous text spliced in; shellgate may allow one only if the
            # grammar admits it (its DFA is the regex Python reads)
            for k in range(MUTANTS):
                m = mutate(rng, rng.choice(yes + no))
                mutants.append((cmd + [m] + files, bool(pyrx.match(m))))
        lines += [a for a, _ in mutants]
        want += [None] * len(mutants)
        with tempfile.TemporaryDirectory(prefix='sg-snip-') as ws:
            for f in ('package.json', 'VERSION', 'lib/a.pm', '.github/workflows/ci.yml'):
                os.makedirs(os.path.dirname(os.path.join(ws, f)) or ws, exist_ok=True)
                open(os.path.join(ws, f), 'w').write('{}\n')
            batch = ''.join(json.dumps({'cmd': shlex.join(a)}) + '\n' for a in lines)
            r = subprocess.run([argv[2], 'check', '--cwd', ws, '--root', ws, '--batch'], input=batch,
                               capture_output=True, text=True, timeout=120,
                               env={'PATH': '/usr/bin:/bin', 'HOME': os.path.join(ws, 'home'),
                                    'LC_ALL': 'C'})
        answers = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        if len(answers) != len(lines):
            print('shellgate answered %d of %d: %s' % (len(answers), len(lines), r.stderr),
                  file=sys.stderr)
            return 1
        bad = 0
        admits = dict((tuple(a), w) for a, w in mutants)
        for a, w, ans in zip(lines, want, answers):
            got = ans.get('decision')
            if w is None:
                if got == 'allow' and not admits[tuple(a)]:
                    bad += 1
                    print('%s: shellgate allows a mutant the grammar refuses' % a, file=sys.stderr)
                continue
            if (got == 'allow') != w:
                bad += 1
                print('%s: shellgate %s (%s), the grammar %s it' % (a, got, ans.get('rule'),
                      'admits' if w else 'refuses'), file=sys.stderr)
        nadm = sum(1 for _, w in mutants if w)
        nall = sum(1 for a, w, ans in zip(lines, want, answers) if w is None and ans.get('decision') == 'allow')
        print('snippet_cases: %d lines, %d as the grammars say, %d not; of %d mutants the grammars '
              'admit %d, shellgate allows %d' % (len(lines), len(lines) - bad, bad, len(mutants), nadm, nall))
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
