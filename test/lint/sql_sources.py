#!/usr/bin/python3
"""test/lint/sql_sources.py — static checks of shardid's SQL sources.

  sql_sources.py objects     every SQL object is defined in one source file
                             and that file has its COMMENT ON; every
                             function and procedure of the shardid schemas
                             pins search_path (C functions aside), or is a
                             procedure that COMMITs, says so, and calls only
                             schema-qualified functions and operators
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
                             is left without a kind, nor a _check_ file
                             elsewhere: validators are _require_<what>()),
                             and docs/reference.md
                             (check_cluster's list), docs/monitoring.md (its
                             table of kinds) and every exporter file under
                             examples/ that reads check_cluster() (by reading
                             the view, or listing them) name each, and no other
  sql_sources.py skeleton    prints the reference entries the sources call for
                             (a start for a new object's entry)
  sql_sources.py fixes       every check_cluster() kind's fix is a call of a
                             shardid function or procedure (or the
                             extension's own CREATE/ALTER EXTENSION, or
                             advice in a comment), never DDL text to paste
  sql_sources.py names       no name or catalog definition is rewritten by
                             text substitution (replace, regexp_replace,
                             translate, overlay)
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


ROUTINE = re.compile(r'^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\s+((?:shardid|shardid_internal)\.\w+)\s*\(', re.I | re.M)
PINNED = re.compile(r'^\s*SET\s+search_path\s*(?:=|TO)\s*pg_catalog\s*,\s*pg_temp\s*$', re.I | re.M)
UNPINNED_REASON = re.compile(r'No SET (?:clause|search_path)', re.I)
# what may precede "(" without a schema in an unpinned body: SQL and
# PL/pgSQL syntax, not functions
SYNTAX = set("""if elsif while and or not in exists coalesce nullif greatest least case when then else return
    returning perform select from where values array row cast any all some into using as on join over filter
    within loop foreach for execute raise exception by group order having limit offset
    distinct set update insert delete exit continue is""".split())


def unpinned_body_problems(body):
    """A body that runs with the caller's search_path: every call
    schema-qualified, every operator OPERATOR(pg_catalog.x)."""
    code = re.sub(r"--[^\n]*|'(?:[^']|'')*'", "''", body)
    code = re.sub(r'OPERATOR\s*\(\s*pg_catalog\.[^)\s]+\s*\)', ' ', code, flags=re.I)
    problems = []
    for m in re.finditer(r'(?<![\w.$%])([A-Za-z_]\w*)\s*\(', code):
        word = m.group(1)
        before = code[:m.start()].rstrip()
        if word.lower() in SYNTAX or re.search(r'\bAS$', before, re.I):
            continue
        problems.append('calls %s() without its schema' % word)
    for m in re.finditer(r'[-+*/<>=~!@#%^&|`?]+', code):
        op, i, j = m.group(0), m.start(), m.end()
        prev = code[:i].rstrip()[-1:] if code[:i].strip() else ''
        nxt = code[j:].lstrip()[:1]
        after = code[j:].lstrip()
        if op == '=>' or (op == '=' and code[i - 1:i] == ':'):
            continue                       # named argument, assignment
        if op == '%' and re.match(r'(?:ROW)?TYPE\b', after, re.I):
            continue                       # %TYPE, %ROWTYPE
        if op == '*' and (prev in '(.,' or nxt in '),' or re.match(r'(?:FROM|INTO)\b', after, re.I)
                          or re.search(r'\bSELECT$', code[:i].rstrip(), re.I)):
            continue                       # SELECT *, x.*, count(*)
        if op == '-' and re.match(r'\d', code[j:j + 1]) and (
                prev in '(,=[<>' or (re.search(r'(\w+)$', code[:i].rstrip()) or [None, ''])[1].lower() in SYNTAX):
            continue                       # a negative constant
        problems.append('uses operator %s without OPERATOR(pg_catalog.%s)' % (op, op))
    return sorted(set(problems))


def check_search_path():
    """Every function and procedure of the shardid schemas pins search_path
    (SET search_path = pg_catalog, pg_temp), but C functions (they resolve
    no SQL name) and procedures that COMMIT (PostgreSQL refuses COMMIT under
    a SET clause): those say why in their header ("No SET clause" / "No SET
    search_path"), and their bodies call only schema-qualified functions and
    OPERATOR(pg_catalog.x) operators."""
    problems, n = [], 0
    for rel in source_files():
        raw = open(os.path.join(TOP, rel), encoding='utf-8').read()
        text = strip_sql_comments(raw)
        for m in ROUTINE.finditer(top_level(text)):
            n += 1
            kind, name = m.group(1).upper(), m.group(2)
            start = text.find(m.group(0).strip())
            head_end = re.compile(r'\$[A-Za-z_]*\$|\bAS\s+\'', re.I).search(text, start)
            head = text[start:head_end.start() if head_end else len(text)]
            if re.search(r'\bLANGUAGE\s+c\b', head, re.I):
                continue
            if PINNED.search(head):
                continue
            if kind == 'FUNCTION':
                problems.append('%s: function %s has no SET search_path = pg_catalog, pg_temp' % (rel, name))
                continue
            if not UNPINNED_REASON.search(raw) or not re.search(r'\b(?:COMMIT|CALL)\b', text[start:], re.I):
                problems.append('%s: procedure %s neither pins search_path nor says why (it COMMITs: '
                                '"No SET clause" in its header)' % (rel, name))
                continue
            tag = head_end.group(0) if head_end and head_end.group(0).startswith('$') else None
            if tag is None:
                problems.append('%s: procedure %s: body not dollar-quoted' % (rel, name))
                continue
            b0 = head_end.end()
            body = text[b0:text.find(tag, b0)]
            for p in unpinned_body_problems(body):
                problems.append('%s: procedure %s runs with the caller\'s search_path and %s' % (rel, name, p))
    return problems, n


def check_objects():
    defined, comments = objects()
    problems, routines = check_search_path()
    for (kind, name), files in sorted(defined.items()):
        # an upgrade may re-create by \ir only; a definition written in
        # two files is a copy that will drift
        if len(set(files)) > 1:
            problems.append('%s %s is defined in %s' % (kind.lower(), name, ', '.join(sorted(set(files)))))
        if kind in COMMENTED_KINDS and (kind, name) not in comments and not files[0].startswith('src/sql/updates/'):
            problems.append('%s %s (%s) has no COMMENT ON' % (kind.lower(), name, files[0]))
    return problems, (len(defined), routines)


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
STATEMENT = re.compile(r"^\s*(?:SELECT|CALL|ALTER|CREATE|DROP|DO|GRANT|REVOKE|INSERT|UPDATE|DELETE|TRUNCATE|SET|RESET|"
                       r"COMMENT|REINDEX|VACUUM|ANALYZE|CLUSTER|LOCK|BEGIN|COMMIT|ROLLBACK|COPY|EXECUTE|REFRESH)\b", re.I)
CALL = re.compile(r"^\s*(?:SELECT\s+(?:\*\s+FROM\s+)?|CALL\s+)shardid\.\w+\((?:[^;'()]|%[sL]|'[^']*'|\([^;()]*\))*\);\s*$", re.I)
# the extension itself: no shardid function exists before it, or at the
# node's version, to call (fixed text, no name read anywhere)
EXTENSION_FIXES = {'CREATE EXTENSION shardid;', 'ALTER EXTENSION shardid UPDATE TO %L;'}


def literals(code):
    """The string literals of SQL code (comments dropped), unquoted."""
    code = re.sub(r"--[^\n]*", '', code)
    return [m.group(1).replace("''", "'") for m in re.finditer(r"'((?:[^']|'')*)'", code)]


def check_fixes():
    """Every kind's fix is a call: in each _check_<kind>() and the functions
    of operations/router it calls, every string literal that is a
    statement is one or more calls of shardid functions or procedures
    (SELECT shardid.f(...); / SELECT * FROM shardid.f(...); / CALL
    shardid.p(...);), or the extension's own CREATE/ALTER EXTENSION; advice
    is a comment (-- ...). No DDL text, no DO block."""
    folder = os.path.join(TOP, os.path.dirname(KINDS_VIEW))
    files = sorted(glob.glob(os.path.join(folder, '_check_*.sql')))
    seen, problems, n = set(), [], 0
    while files:
        path = files.pop(0)
        if path in seen:
            continue
        seen.add(path)
        rel = os.path.relpath(path, TOP)
        code = open(path, encoding='utf-8').read()
        for ref in set(re.findall(r'\bshardid_internal\.(_\w+)', code_without_literals(code))):
            other = os.path.join(folder, ref + '.sql')
            if os.path.exists(other) and not ref.startswith('_check_') and ref not in ('_live_shards', '_node_facts_safe'):
                files.append(other)
        # a fix built on a node and passed through is text nobody checked here
        for m in re.finditer(r"->>?\s*'(fix|sql|statement|command_text)'", code):
            problems.append('%s: passes text read on a node through as a fix (%s): build the call here' % (rel, m.group(0)))
        for lit in literals(code):
            if lit.lstrip().startswith('--') or not STATEMENT.match(lit):
                continue
            n += 1
            if lit.strip() in EXTENSION_FIXES:
                continue
            calls = [c.strip() + ';' for c in lit.strip().rstrip(';').split('; ')]
            bad = [c for c in calls if not CALL.match(c)]
            if bad:
                problems.append('%s: a fix that is not a call of a shardid function or procedure: %s' % (rel, lit))
    return problems, (len(seen), n)


NAME_SUBST = re.compile(r'\b(?:regexp_replace|replace|translate|overlay)\s*\(', re.I)
NAMEY = re.compile(r"quote_ident|%I|nspname|relname|schema|pg_get_\w*def|pg_get_expr|::regclass|template|table_name", re.I)


def check_names():
    """No text substitution of names: no replace(), regexp_replace(),
    translate() or overlay() whose arguments hold a name or a definition
    read from the catalog (a copy's definition is built from the catalog,
    only the table's own name changing; never by rewriting schema names)."""
    problems, n = [], 0
    for rel, text in sources():
        n += 1
        code = re.sub(r"'(?:[^']|'')*'", "''", text)
        for m in NAME_SUBST.finditer(code):
            depth, j = 0, m.end() - 1
            while j < len(code):
                depth += {'(': 1, ')': -1}.get(code[j], 0)
                if depth == 0:
                    break
                j += 1
            args = code[m.end():j]
            if NAMEY.search(args):
                problems.append('%s: %s...) substitutes text in a name or definition: build the statement from the '
                                'catalog\'s parts instead' % (rel, code[m.start():min(j, m.start() + 80)].replace('\n', ' ')))
    return problems, n


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
    # the prefix says one thing: _check_ is a kind's, beside the view; a
    # function that refuses an argument or a state is _require_<what>()
    kinds_dir = os.path.join(TOP, os.path.dirname(KINDS_VIEW))
    for f in sorted(glob.glob(os.path.join(TOP, 'src', 'sql', '**', '_check_*.sql'), recursive=True)):
        if os.path.dirname(f) != kinds_dir and '/released/' not in f:
            problems.append('%s: _check_ names check_cluster()\'s kinds (%s); a validator is _require_<what>()'
                            % (os.path.relpath(f, TOP), os.path.relpath(kinds_dir, TOP)))

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
        problems, (n, r) = check_objects()
        label = ('%d SQL objects, each defined once, with its COMMENT; %d routines, each with search_path pinned '
                 'or, a procedure that COMMITs, only qualified names' % (n, r))
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
    elif what == 'fixes':
        problems, (f, n) = check_fixes()
        label = '%d check_cluster() sources, %d fixes, each a call of a shardid function or procedure' % (f, n)
    elif what == 'names':
        problems, n = check_names()
        label = '%d SQL sources, no name or definition rewritten by text substitution' % n
    elif what == 'fence':
        problems, n = check_fence()
        label = '%d SQL and C sources, no role switched outside the fence' % n
    else:
        print('usage: sql_sources.py objects|reference|areas|kinds|fixes|names|fence|skeleton', file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    print('%s: %s' % ('ok' if not problems else 'FAILED', label))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
