#!/usr/bin/python3
"""test/lint/sql_sources.py — static checks of shardid's SQL sources.

  sql_sources.py objects     every SQL object is defined in one source file
                             and that file has its COMMENT ON
  sql_sources.py reference   docs/reference.md has an entry for every
                             function, procedure, view, GUC and SQLSTATE, and
                             each entry quotes the object's COMMENT verbatim
  sql_sources.py areas       the sources by area: src/sql/shardid.sql names
                             each area's install.sql in install order, every
                             object file is named by its area's install.sql
                             once, no folder holds more than 60 files, and an
                             object calls only into its own area, common/
                             and the areas installed before it
  sql_sources.py kinds       check_cluster()'s kinds, listed once by the view
                             shardid.check_cluster_kinds: each has its
                             function _check_<kind>() (and no such function
                             is left without a kind), and docs/reference.md
                             (check_cluster's list), docs/monitoring.md (its
                             table of kinds) and every exporter file under
                             examples/ that reads check_cluster() (by reading
                             the view, or listing them) name each, and no other
  sql_sources.py skeleton    prints the reference entries the sources call for
                             (a start for a new object's entry)
  sql_sources.py fence       no source switches roles by hand (SET ROLE, RESET
                             ROLE, SET SESSION AUTHORIZATION, set_config of
                             role or session_authorization), in its code or in
                             the text it sends to a node: a table owner's code
                             runs only through the one fence, _run_as_owner
                             (a security-restricted operation as the owner),
                             and in C only src/pg/run_as.cpp changes the user

The sources are src/sql/AREA/[router/]*.sql and src/sql/updates/*.sql (src/sql/shardid.sql
and each area's install.sql name them); src/sql/released/shardid--*.sql are released
(frozen), build/shardid--*.sql built from the sources, and sql/*.sql are
pg_regress tests. Exits 1 and prints one line per problem.
"""
import glob
import os
import re
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
MAX_FILES = 60   # per folder of src/sql
DEFINITION = re.compile(
    r'^\s*CREATE\s+(?:OR\s+REPLACE\s+)?'
    r'(FUNCTION|PROCEDURE|VIEW|TABLE|SEQUENCE|TYPE|EVENT\s+TRIGGER|TRIGGER|INDEX)\s+'
    r'(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)', re.I | re.M)
COMMENT = re.compile(
    r"^\s*COMMENT\s+ON\s+(FUNCTION|PROCEDURE|VIEW|TABLE|SEQUENCE|TYPE|EVENT\s+TRIGGER)\s+([\w.]+)[^']*?IS\s*\n?\s*'((?:[^']|'')*)'",
    re.I | re.M)
COMMENTED_KINDS = {'FUNCTION', 'PROCEDURE', 'VIEW', 'TABLE', 'SEQUENCE', 'TYPE', 'EVENT TRIGGER'}


def strip_sql_comments(text):
    """Drops -- comments outside string literals and dollar quotes."""
    out, i, n, tag = [], 0, len(text), None
    while i < n:
        if tag:
            j = text.find(tag, i)
            j = n if j < 0 else j + len(tag)
            out.append(text[i:j]); i = j; tag = None
            continue
        m = re.compile(r"--[^\n]*|'(?:[^']|'')*'|\$[A-Za-z_]*\$").match(text, i)
        if m and m.group(0).startswith('--'):
            i = m.end()
        elif m and m.group(0).startswith('$'):
            tag = m.group(0); out.append(tag); i = m.end()
        elif m:
            out.append(m.group(0)); i = m.end()
        else:
            out.append(text[i]); i += 1
    return ''.join(out)


def top_level(text):
    """The text outside dollar-quoted bodies (so a body's CREATE TABLE is not a definition)."""
    return re.sub(r'(\$[A-Za-z_]*\$).*?\1', ' ', text, flags=re.S)


def source_files():
    """Every SQL source (relative paths), the released scripts aside."""
    for path in sorted(glob.glob(os.path.join(TOP, 'src', 'sql', '**', '*.sql'), recursive=True)):
        rel = os.path.relpath(path, TOP)
        if not rel.startswith('src/sql/released/'):
            yield rel


def sources():
    for rel in source_files():
        yield rel, strip_sql_comments(open(os.path.join(TOP, rel), encoding='utf-8').read())


def objects():
    """{(kind, name): [files]} and {(kind, name): comment} over every source."""
    defined, comments = {}, {}
    for rel, text in sources():
        for kind, name in DEFINITION.findall(top_level(text)):
            kind = ' '.join(kind.upper().split())
            if kind == 'TRIGGER':
                table = re.search(r'TRIGGER\s+%s\b.*?\bON\s+([\w.]+)' % re.escape(name), text, re.S | re.I)
                name = '%s on %s' % (name, table.group(1) if table else '?')
            defined.setdefault((kind, name), []).append(rel)
        for kind, name, body in COMMENT.findall(text):
            comments[(' '.join(kind.upper().split()), name)] = body.replace("''", "'")
    return defined, comments


def check_objects():
    defined, comments = objects()
    problems = []
    for (kind, name), files in sorted(defined.items()):
        # an upgrade may re-create by \ir only; a definition written in
        # two files is a copy that will drift
        if len(set(files)) > 1:
            problems.append('%s %s is defined in %s' % (kind.lower(), name, ', '.join(sorted(set(files)))))
        if kind in COMMENTED_KINDS and (kind, name) not in comments and not files[0].startswith('src/sql/updates/'):
            problems.append('%s %s (%s) has no COMMENT ON' % (kind.lower(), name, files[0]))
    return problems, len(defined)


def gucs():
    """{name: short description} of DefineCustom*Variable calls in src/pg."""
    out = {}
    for path in glob.glob(os.path.join(TOP, 'src', 'pg', '*.cpp')):
        text = open(path, encoding='utf-8').read()
        for name, desc in re.findall(r'DefineCustom\w+Variable\(\s*"([\w.]+)",\s*"((?:[^"\\]|\\.)*)"', text):
            out[name] = desc
    return out


def sqlstates():
    """Condition names raised by the SQL sources and 5-character SQLSTATEs raised by the glue."""
    names = set()
    for _, text in sources():
        names.update(re.findall(r"ERRCODE\s*=\s*'([a-z_0-9]+)'", text))
    codes = set()
    macros = set()
    for path in glob.glob(os.path.join(TOP, 'src', 'pg', '*.cpp')):
        macros.update(re.findall(r'errcode\((ERRCODE_[A-Z_]+)\)', open(path, encoding='utf-8').read()))
    header = None
    for cand in sorted(glob.glob('/usr/include/postgresql/*/server/utils/errcodes.h')):
        header = cand
    if header:
        table = dict((m, ''.join(c)) for m, *c in re.findall(
            r"#define (ERRCODE_\w+) MAKE_SQLSTATE\('(.)','(.)','(.)','(.)','(.)'\)", open(header).read()))
        codes = {table[m] for m in macros if m in table}
    return names, codes


def reference_entries():
    """What docs/reference.md must hold: (title, needle) pairs."""
    defined, comments = objects()
    need = []
    for (kind, name), files in sorted(defined.items()):
        if kind not in ('FUNCTION', 'PROCEDURE', 'VIEW'):
            continue
        comment = comments.get((kind, name))
        need.append((kind.lower(), name, comment))
    return need


def check_reference():
    path = os.path.join(TOP, 'docs', 'reference.md')
    if not os.path.exists(path):
        return ['docs/reference.md is missing'], 0
    doc = open(path, encoding='utf-8').read()
    lines = doc.split('\n')
    problems, count = [], 0
    for kind, name, comment in reference_entries():
        count += 1
        short = name.split('.', 1)[1]
        # an entry: a heading naming the object (### `shardid.name(...)`) or,
        # for internal functions, a table row | `_name(...)` | ... |
        where = [i for i, l in enumerate(lines)
                 if (l.startswith('#') or l.startswith('|')) and re.search(r'`(?:shardid(?:_internal)?\.)?%s\b' % re.escape(short), l)]
        if not where:
            problems.append('docs/reference.md has no entry for %s %s' % (kind, name))
            continue
        # one entry each: a heading or a table row whose first cell names it
        own = [i for i in where if re.match(r'(#+|\|) `(?:shardid(?:_internal)?\.)?%s\b' % re.escape(short), lines[i])]
        if len(own) > 1:
            problems.append('docs/reference.md has %d entries for %s %s (lines %s)'
                            % (len(own), kind, name, ', '.join(str(i + 1) for i in own)))
        if comment is None:
            continue
        # the entry quotes the COMMENT: on its table row, or in the lines
        # after its heading up to the next heading
        ok = False
        for i in where:
            if lines[i].startswith('|'):
                ok = ok or comment in lines[i].replace('\\|', '|')
            else:
                j = i + 1
                while j < len(lines) and not lines[j].startswith('#'):
                    if lines[j].startswith('>') and lines[j].lstrip('> ').strip() == comment:
                        ok = True
                    j += 1
        if not ok:
            problems.append('docs/reference.md: the entry of %s %s does not quote its COMMENT: %s' % (kind, name, comment))
    # the internal functions' table names each one's source file
    where = {}
    for rel, text in sources():
        for kind, name in DEFINITION.findall(top_level(text)):
            where.setdefault(name.split('.')[-1], rel)
    for i, line in enumerate(lines):
        m = re.match(r'\| `(_\w+)[(`].*\| `([\w/]+\.sql)` \|$', line)
        if line.startswith('| `_') and not m:
            problems.append('docs/reference.md line %d: an internal function\'s row ends with its source file (| `area/file.sql` |)' % (i + 1))
        elif m and 'src/sql/' + m.group(2) != where.get(m.group(1)):
            problems.append('docs/reference.md line %d: %s is in %s, not %s' % (i + 1, m.group(1), where.get(m.group(1)), m.group(2)))
    for name, desc in sorted(gucs().items()):
        count += 1
        if not re.search(r'^#+ `%s`' % re.escape(name), doc, re.M):
            problems.append('docs/reference.md has no entry for setting %s' % name)
        elif desc not in doc:
            problems.append('docs/reference.md: setting %s does not quote its description: %s' % (name, desc))
    names, codes = sqlstates()
    for n in sorted(names):
        count += 1
        if not re.search(r'\b%s\b' % re.escape(n), doc):
            problems.append('docs/reference.md does not list SQLSTATE condition %s' % n)
    for c in sorted(codes):
        count += 1
        if '`%s`' % c not in doc:
            problems.append('docs/reference.md does not list SQLSTATE %s' % c)
    rows = re.findall(r'^\| `([0-9A-Z]{5})` \|', doc, re.M)
    for c in sorted(set(r for r in rows if rows.count(r) > 1)):
        problems.append('docs/reference.md lists SQLSTATE %s in %d rows of its table' % (c, rows.count(c)))
    return problems, count


def skeleton():
    for kind, name, comment in reference_entries():
        print('### `%s`\n\n> %s\n' % (name, comment))
    for name, desc in sorted(gucs().items()):
        print('### `%s`\n\n> %s\n' % (name, desc))
    names, codes = sqlstates()
    print('SQLSTATE conditions:', ' '.join(sorted(names)))
    print('SQLSTATE codes (C):', ' '.join(sorted(codes)))


def manifest_lines(rel):
    """The files a manifest names with \\ir, relative to the top."""
    out = []
    for line in open(os.path.join(TOP, rel), encoding='utf-8'):
        if line.startswith('\\ir '):
            out.append(os.path.normpath(os.path.join(os.path.dirname(rel), line.split()[1])))
    return out


def code_without_literals(text):
    """SQL without comments and string literals, dollar-quoted bodies read as
    code: what an object calls. A literal cast to a reg* type
    ('shardid.f()'::regprocedure) names an object, and stays."""
    def keep(m):
        if m.group(0).startswith('--'):
            return ''
        return m.group(0) if m.group(1) else "''"
    return re.sub(r"--[^\n]*|'(?:[^']|'')*'(\s*::\s*(?:pg_catalog\.)?reg\w+)?", keep, text)


def check_areas():
    problems = []
    areas = []
    for m in manifest_lines('src/sql/shardid.sql'):
        if not re.match(r'src/sql/\w+/install\.sql$', m):
            problems.append('src/sql/shardid.sql names %s, not an area\'s install.sql' % m)
            continue
        areas.append(m.split('/')[2])
    if not areas or areas[0] != 'common':
        problems.append('src/sql/shardid.sql must name common/install.sql first')
    named = {}
    for a in areas:
        for f in manifest_lines('src/sql/%s/install.sql' % a):
            if not f.startswith('src/sql/%s/' % a):
                problems.append('src/sql/%s/install.sql names %s, outside its area' % (a, f))
            if f in named:
                problems.append('%s is named twice (src/sql/%s/install.sql and src/sql/%s/install.sql)' % (f, named[f], a))
            named[f] = a
    objects_in = {}
    for rel in source_files():
        parts = rel.split('/')
        if parts[2] in ('updates',) or rel == 'src/sql/shardid.sql' or parts[-1] == 'install.sql':
            continue
        if rel not in named:
            problems.append('%s is not named by its area\'s install.sql' % rel)
            continue
        text = open(os.path.join(TOP, rel), encoding='utf-8').read()
        d = DEFINITION.search(top_level(strip_sql_comments(text)))
        if d:
            objects_in[d.group(2).split('.')[-1]] = (rel, named[rel], code_without_literals(text))
    for d in sorted(set(os.path.dirname(f) for f in source_files())):
        n = len(glob.glob(os.path.join(TOP, d, '*.sql')))
        if n > MAX_FILES:
            problems.append('%s holds %d files (at most %d: split the area)' % (d, n, MAX_FILES))
    order = {a: i for i, a in enumerate(areas)}
    calls = 0
    for name, (rel, area, code) in sorted(objects_in.items()):
        for ref in sorted(set(re.findall(r'\bshardid(?:_internal)?\.(\w+)', code))):
            if ref == name or ref not in objects_in:
                continue
            calls += 1
            other = objects_in[ref][1]
            if other != 'common' and order[other] > order[area]:
                problems.append('%s (area %s) calls %s of area %s, installed after it: move the shared object '
                                'to common/ or to the earlier area' % (rel, area, ref, other))
    return problems, (len(areas), len(named), calls)


ROLE_SWITCH = re.compile(
    r"\b(?:RESET\s+ROLE|SET\s+(?:LOCAL\s+|SESSION\s+)?ROLE|SET\s+(?:LOCAL\s+|SESSION\s+)?SESSION\s+AUTHORIZATION"
    r"|set_config\s*\(\s*'(?:role|session_authorization)')", re.I)
C_ROLE_SWITCH = re.compile(r'\b(SetUserIdAndSecContext|SetCurrentRoleId|SetSessionAuthorization|SetUserId)\s*\(')
FENCE_FILE = 'src/pg/run_as.cpp'


def check_fence():
    """Role switches outside the one fence: SQL sources (comments aside, string
    literals included: text sent to a node counts) and the C glue."""
    problems, n = [], 0
    for path, code in sources():
        n += 1
        for m in ROLE_SWITCH.finditer(code):
            problems.append('%s: %r switches roles by hand; run the statement through '
                            'shardid_internal._run_as_owner() instead' % (path, m.group(0)))
    for path in sorted(glob.glob(os.path.join(TOP, 'src', 'pg', '*.c*'))):
        n += 1
        rel = os.path.relpath(path, TOP)
        if rel == FENCE_FILE:
            continue
        code = re.sub(r'/\*.*?\*/|//[^\n]*', ' ', open(path).read(), flags=re.S)
        for m in C_ROLE_SWITCH.finditer(code):
            problems.append('%s: %s() changes the user outside %s' % (rel, m.group(1), FENCE_FILE))
    return problems, n


KINDS_VIEW = 'src/sql/operations/router/check_cluster_kinds.sql'


def check_kinds():
    """check_cluster()'s kinds: the view's rows against the _check_<kind>()
    functions, the docs and the exporters."""
    text = strip_sql_comments(open(os.path.join(TOP, KINDS_VIEW), encoding='utf-8').read())
    kinds = re.findall(r"^\s*\(\d+,\s*'(\w+)',", text, re.M)
    problems = []
    if not kinds:
        return ['%s: no kind found (rows "(step, \'kind\', \'summary\')")' % KINDS_VIEW], 0
    for k in sorted(set(k for k in kinds if kinds.count(k) > 1)):
        problems.append('%s lists kind %s twice' % (KINDS_VIEW, k))
    # a kind's function: its own file beside the view
    checks = set(os.path.basename(f)[len('_check_'):-len('.sql')]
                 for f in glob.glob(os.path.join(TOP, os.path.dirname(KINDS_VIEW), '_check_*.sql')))
    for k in kinds:
        if k not in checks:
            problems.append('kind %s has no function shardid_internal._check_%s()' % (k, k))
    for k in sorted(checks - set(kinds)):
        problems.append('shardid_internal._check_%s() is no kind of %s' % (k, KINDS_VIEW))

    def compare(where, named):
        for k in kinds:
            if k not in named:
                problems.append('%s does not name kind %s' % (where, k))
        for k in sorted(set(named) - set(kinds)):
            problems.append('%s names %s, which is no kind of %s' % (where, k, KINDS_VIEW))

    ref = open(os.path.join(TOP, 'docs', 'reference.md'), encoding='utf-8').read()
    m = re.search(r'The kinds \(`shardid\.check_cluster_kinds`.*?\):\s*((?:`\w+`[,.]?\s*)+)', ref, re.S)
    compare('docs/reference.md (check_cluster\'s kinds)', re.findall(r'`(\w+)`', m.group(1)) if m else [])
    mon = open(os.path.join(TOP, 'docs', 'monitoring.md'), encoding='utf-8').read()
    m = re.search(r'^\| kind \| what \| fix \|\n\|[-|]+\|\n((?:\|.*\n)+)', mon, re.M)
    compare('docs/monitoring.md (the table of kinds)',
            [k for row in (m.group(1).splitlines() if m else []) for k in re.findall(r'`(\w+)`', row.split('|')[1])])
    files = 0
    for path in sorted(glob.glob(os.path.join(TOP, 'examples', '**', '*'), recursive=True)):
        if not os.path.isfile(path) or not path.endswith(('.yaml', '.yml', '.sql')):
            continue
        text = open(path, encoding='utf-8').read()
        if 'check_cluster()' not in text or not re.search(r'\bkind\b', text):
            continue
        rel = os.path.relpath(path, TOP)
        if rel.endswith('router_setup.sql'):
            continue   # defines the exporter's wrapper, counts no kind
        files += 1
        if 'shardid.check_cluster_kinds' in text:
            continue
        listed = re.search(r'ARRAY\[([^\]]*)\]', text)
        compare(rel, re.findall(r"'(\w+)'", listed.group(1)) if listed else [])
    return problems, (len(kinds), files)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ''
    if what == 'skeleton':
        skeleton()
        return 0
    if what == 'objects':
        problems, n = check_objects()
        label = '%d SQL objects, each defined once, with its COMMENT' % n
    elif what == 'reference':
        problems, n = check_reference()
        label = '%d functions, views, settings and SQLSTATEs in docs/reference.md' % n
    elif what == 'areas':
        problems, (a, f, c) = check_areas()
        label = '%d areas, %d files each named once, %d calls, none into a later area' % (a, f, c)
    elif what == 'kinds':
        problems, (k, f) = check_kinds()
        label = ('%d kinds of check_cluster(), each with its function, in docs/reference.md, docs/monitoring.md '
                 'and %d exporter files' % (k, f))
    elif what == 'fence':
        problems, n = check_fence()
        label = '%d SQL and C sources, no role switched outside the fence' % n
    else:
        print('usage: sql_sources.py objects|reference|areas|kinds|fence|skeleton', file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    print('%s: %s' % ('ok' if not problems else 'FAILED', label))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
