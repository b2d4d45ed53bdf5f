#!/usr/bin/env python3
"""Every single-point mutant of the original SequencePack module (Python's ast).

Usage:
  mutate.py list ORIGINAL [--json]     one line per mutant: id, line, operator, change
  mutate.py write ORIGINAL DIR [ID...]  DIR/<id>.py per mutant (all by default), and
                                        DIR/unmutated.py, the module written back the same way
  mutate.py show ORIGINAL ID            the mutant as a unified diff against unmutated.py

Scope: the original's public operations (module-level functions and methods
whose names do not start with "_") and every module-level helper they call,
transitively. Not mutated, because they cannot change what a call computes:
docstrings, type annotations, `global` statements, the logger's calls
(`log.info(...)`: the adapter stubs the framework's logger) and assertion
messages and f-strings (message text only).

Operators:
  cmp-boundary  `<` <-> `<=`, `>` <-> `>=`
  cmp-negate    `<` -> `>=`, `<=` -> `>`, `>` -> `<=`, `>=` -> `<`, `==` <-> `!=`,
                `in` <-> `not in`, `is` <-> `is not`
  bool-op       `and` <-> `or`; `not x` -> `x`
  const         integer constants (defaults included) +1 and -1; True <-> False
  arith         `+` <-> `-`
  slice         a slice's lower and upper bound +1 and -1
  swap-name     names, attributes, keys, mode strings and keyword names
                exchanged with their counterpart: causal <-> full / full_only,
                und <-> gen, image <-> video (e.g. `_causal_indices` <-> `_full_indices`)
  drop-stmt     a statement replaced by `pass`
  drop-assert   an assert replaced by `pass`
  swap-args     two adjacent positional arguments (not of max, min, lcm, gcd,
                whose order cannot matter), or two adjacent keyword
                arguments' values, exchanged
  call          `max` <-> `min`; `math.lcm` -> `max`, `math.lcm` -> `math.gcd`

A mutant that does not compile (e.g. a repeated keyword) or whose text equals
the unmutated module's, or another mutant's, is not generated. Ids are
`<function>:<operator>:<n>`, n counting that operator's mutants in that
function in source order: stable while the original does not change.
"""
import ast
import copy
import difflib
import json
import sys

PAIRS = (("causal", "full_only"), ("causal", "full"), ("CAUSAL", "FULL"), ("und", "gen"), ("image", "video"),
         ("IMAGE", "VIDEO"))

CMP_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
CMP_NEGATE = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Eq: ast.NotEq,
              ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
          ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def read_module(path):
    """The module's text, its first line blanked when it is a bare path (as
    the spec file carries; the adapter does the same), so lines keep their numbers."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    first = lines[0].strip()
    if first and " " not in first and first.endswith(".py") and not first.startswith(("#", "import", "from")):
        lines[0] = ""
    return "\n".join(lines)


def short(node, limit=70):
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def is_log_call(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "log")


def counterparts(token, vocabulary):
    out = []
    for a, b in PAIRS:
        for x, y in ((a, b), (b, a)):
            if x in token:
                other = token.replace(x, y)
                if other != token and other in vocabulary and other not in out:
                    out.append(other)
    return out


def scope(tree):
    """The functions to mutate: (qualified name, node), in source order."""
    top = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    methods = {"%s.%s" % (c.name, f.name): f for c in tree.body if isinstance(c, ast.ClassDef)
               for f in c.body if isinstance(f, ast.FunctionDef)}
    chosen = {name for name in top if not name.startswith("_")}
    chosen |= {q for q in methods if not q.split(".")[-1].startswith("_") and not q.startswith("_")}
    todo = list(chosen)
    while todo:
        name = todo.pop()
        node = top.get(name) or methods.get(name)
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in top:
                if call.func.id not in chosen:
                    chosen.add(call.func.id)
                    todo.append(call.func.id)
    everything = list(top.items()) + list(methods.items())
    return sorted(((q, n) for q, n in everything if q in chosen), key=lambda qn: qn[1].lineno)


class Site:
    """One mutation: where (a path of fields from the module), what (make)."""

    def __init__(self, func, op, path, line, change, make):
        self.func, self.op, self.path, self.line, self.change, self.make = func, op, path, line, change, make


def resolve(root, path):
    node = root
    for field, index in path:
        node = getattr(node, field) if index is None else getattr(node, field)[index]
    return node


def replace(root, path, new):
    parent = resolve(root, path[:-1])
    field, index = path[-1]
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


class Collector:
    def __init__(self, tree):
        self.tree = tree
        self.sites = []
        self.globals = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for n in tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    if isinstance(t, ast.Name):
                        self.globals.add(t.id)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                self.globals |= {(a.asname or a.name).split(".")[0] for a in n.names}
        self.strings, self.attrs = set(), set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                self.strings.add(n.value)
            elif isinstance(n, ast.Attribute):
                self.attrs.add(n.attr)
            elif isinstance(n, ast.ClassDef):
                self.attrs |= {s.target.id for s in n.body if isinstance(s, ast.AnnAssign)}
        self.keywords = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef):
                self.keywords |= {a.arg for a in n.args.args + n.args.kwonlyargs}

    def add(self, op, path, node, change, make):
        self.sites.append(Site(self.func, op, list(path), getattr(node, "lineno", self.line), change, make))

    def function(self, qualname, node, path):
        self.func = qualname
        self.line = node.lineno
        self.locals = {a.arg for a in node.args.args + node.args.kwonlyargs}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.locals.add(n.id)
        defaults = node.args.defaults
        for i, d in enumerate(defaults):
            self.expr(d, path + [("args", None), ("defaults", i)])
        for i, d in enumerate(node.args.kw_defaults):
            if d is not None:
                self.expr(d, path + [("args", None), ("kw_defaults", i)])
        self.body(node.body, path, "body")

    def body(self, stmts, path, field):
        for i, stmt in enumerate(stmts):
            here = path + [(field, i)]
            if (i == 0 and is_docstring(stmt)) or isinstance(stmt, ast.Global):
                continue
            if isinstance(stmt, ast.Expr) and is_log_call(stmt.value):
                continue
            self.line = stmt.lineno
            op = "drop-assert" if isinstance(stmt, ast.Assert) else "drop-stmt"
            self.add(op, here, stmt, "drop `%s`" % short(stmt),
                     lambda old: ast.copy_location(ast.Pass(), old))
            self.statement(stmt, here)

    def statement(self, stmt, path):
        for field, value in ast.iter_fields(stmt):
            if field in ("body", "orelse", "finalbody") and isinstance(value, list):
                self.body(value, path, field)
            elif field == "handlers":
                for i, h in enumerate(value):
                    self.body(h.body, path + [("handlers", i)], "body")
            elif isinstance(stmt, ast.Assert) and field == "msg":
                continue
            elif isinstance(stmt, ast.AnnAssign) and field == "annotation":
                continue
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        self.expr(v, path + [(field, i)])
            elif isinstance(value, ast.AST):
                self.expr(value, path + [(field, None)])

    def expr(self, node, path):
        if isinstance(node, ast.JoinedStr) or is_log_call(node):
            return
        if isinstance(node, (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)):
            return
        if isinstance(node, ast.keyword):
            self.keyword(node, path)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            for name, table in (("cmp-boundary", CMP_BOUNDARY), ("cmp-negate", CMP_NEGATE)):
                if op in table:
                    new = table[op]
                    self.add(name, path, node, "`%s` -> `%s` in `%s`" % (SYMBOL[op], SYMBOL[new], short(node)),
                             lambda old, new=new: ast.copy_location(
                                 ast.Compare(left=old.left, ops=[new()], comparators=old.comparators), old))
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            self.add("bool-op", path, node, "`%s` -> `%s`" % ("and" if new is ast.Or else "or",
                                                             "or" if new is ast.Or else "and"),
                     lambda old, new=new: ast.copy_location(ast.BoolOp(op=new(), values=old.values), old))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.add("bool-op", path, node, "`%s` -> `%s`" % (short(node), short(node.operand)),
                     lambda old: old.operand)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            new = ast.Sub if isinstance(node.op, ast.Add) else ast.Add
            self.add("arith", path, node, "`%s` -> `%s` in `%s`" % ("+" if new is ast.Sub else "-",
                                                                   "-" if new is ast.Sub else "+", short(node)),
                     lambda old, new=new: ast.copy_location(ast.BinOp(left=old.left, op=new(), right=old.right),
                                                            old))
        elif isinstance(node, ast.Constant):
            self.constant(node, path)
        elif isinstance(node, ast.Name):
            for other in counterparts(node.id, self.locals | self.globals):
                self.add("swap-name", path, node, "`%s` -> `%s`" % (node.id, other),
                         lambda old, other=other: ast.copy_location(ast.Name(id=other, ctx=old.ctx), old))
        elif isinstance(node, ast.Attribute):
            for other in counterparts(node.attr, self.attrs):
                self.add("swap-name", path, node, "`.%s` -> `.%s`" % (node.attr, other),
                         lambda old, other=other: ast.copy_location(
                             ast.Attribute(value=old.value, attr=other, ctx=old.ctx), old))
        elif isinstance(node, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(node, field)
                if bound is None:
                    continue
                for delta in (1, -1):
                    self.add("slice", path + [(field, None)], bound,
                             "slice %s `%s` -> `%s %s 1`" % (field, short(bound), short(bound), "+-"[delta < 0]),
                             lambda old, delta=delta: ast.copy_location(
                                 ast.BinOp(left=old, op=ast.Add() if delta > 0 else ast.Sub(),
                                           right=ast.Constant(1)), old))
        elif isinstance(node, ast.Call):
            self.call(node, path)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        self.expr(v, path + [(field, i)])
            elif isinstance(value, ast.AST):
                self.expr(value, path + [(field, None)])

    def constant(self, node, path):
        value = node.value
        if isinstance(value, bool):
            self.add("const", path, node, "`%s` -> `%s`" % (value, not value),
                     lambda old: ast.copy_location(ast.Constant(not old.value), old))
        elif isinstance(value, int):
            for delta in (1, -1):
                self.add("const", path, node, "`%d` -> `%d`" % (value, value + delta),
                         lambda old, delta=delta: ast.copy_location(ast.Constant(old.value + delta), old))
        elif isinstance(value, str):
            for other in counterparts(value, self.strings):
                self.add("swap-name", path, node, "`%r` -> `%r`" % (value, other),
                         lambda old, other=other: ast.copy_location(ast.Constant(other), old))

    def keyword(self, node, path):
        if node.arg is None:
            return
        for other in counterparts(node.arg, self.keywords):
            self.add("swap-name", path, node, "keyword `%s=` -> `%s=`" % (node.arg, other),
                     lambda old, other=other: ast.keyword(arg=other, value=old.value))

    def call(self, node, path):
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("max", "min"):
            other = "min" if f.id == "max" else "max"
            self.add("call", path + [("func", None)], node, "`%s(...)` -> `%s(...)`" % (f.id, other),
                     lambda old, other=other: ast.copy_location(ast.Name(id=other, ctx=ast.Load()), old))
        if isinstance(f, ast.Attribute) and f.attr == "lcm" and isinstance(f.value, ast.Name):
            self.add("call", path + [("func", None)], node, "`math.lcm(...)` -> `max(...)`",
                     lambda old: ast.copy_location(ast.Name(id="max", ctx=ast.Load()), old))
            self.add("call", path + [("func", None)], node, "`math.lcm(...)` -> `math.gcd(...)`",
                     lambda old: ast.copy_location(ast.Attribute(value=old.value, attr="gcd", ctx=ast.Load()), old))
        args = node.args
        commutative = (isinstance(f, ast.Name) and f.id in ("max", "min")) or \
            (isinstance(f, ast.Attribute) and f.attr in ("lcm", "gcd"))
        if not commutative and not any(isinstance(a, ast.Starred) for a in args):
            for i in range(len(args) - 1):
                self.add("swap-args", path, node, "arguments %d and %d of `%s`" % (i + 1, i + 2, short(node, 50)),
                         lambda old, i=i: swapped_args(old, i))
        kws = [k for k in node.keywords if k.arg is not None]
        for i in range(len(kws) - 1):
            self.add("swap-args", path, node, "values of `%s=` and `%s=`" % (kws[i].arg, kws[i + 1].arg),
                     lambda old, i=i: swapped_keywords(old, i))


def swapped_args(old, i):
    args = list(old.args)
    args[i], args[i + 1] = args[i + 1], args[i]
    return ast.copy_location(ast.Call(func=old.func, args=args, keywords=old.keywords), old)


def swapped_keywords(old, i):
    kws = [copy.copy(k) for k in old.keywords]
    named = [k for k in kws if k.arg is not None]
    named[i].value, named[i + 1].value = named[i + 1].value, named[i].value
    return ast.copy_location(ast.Call(func=old.func, args=old.args, keywords=kws), old)


def path_of(tree, target):
    for i, n in enumerate(tree.body):
        if n is target:
            return [("body", i)]
        if isinstance(n, ast.ClassDef):
            for j, m in enumerate(n.body):
                if m is target:
                    return [("body", i), ("body", j)]
    raise LookupError(target.name)


class Mutant:
    def __init__(self, ident, site, text):
        self.id, self.site, self.text = ident, site, text

    def record(self):
        s = self.site
        return {"id": self.id, "function": s.func, "line": s.line, "operator": s.op, "change": s.change}


def module_text(parts):
    return "\n\n".join(parts) + "\n"


def unmutated(source):
    """The module written back from its tree, as every mutant is."""
    return module_text([ast.unparse(stmt) for stmt in ast.parse(source).body])


def mutants(source):
    """Every mutant of `source`, in source order. Each is made in place on
    the one tree (the top-level statement that holds it written back alone),
    then undone."""
    tree = ast.parse(source)
    collector = Collector(tree)
    for qualname, node in scope(tree):
        collector.function(qualname, node, path_of(tree, node))
    parts = [ast.unparse(stmt) for stmt in tree.body]
    seen = {module_text(parts)}
    counts = {}
    out = []
    for site in collector.sites:
        top = site.path[0][1]
        old = resolve(tree, site.path)
        replace(tree, site.path, site.make(old))
        try:
            part = ast.unparse(ast.fix_missing_locations(tree.body[top]))
            compile(part, "<mutant>", "exec")
        except (SyntaxError, ValueError):
            continue  # stillborn: e.g. a keyword repeated
        finally:
            replace(tree, site.path, old)
        text = module_text(parts[:top] + [part] + parts[top + 1:])
        if text in seen:
            continue
        seen.add(text)
        key = (site.func, site.op)
        counts[key] = counts.get(key, 0) + 1
        out.append(Mutant("%s:%s:%d" % (site.func, site.op, counts[key]), site, text))
    return out


def main(argv):
    if len(argv) < 3 or argv[1] not in ("list", "write", "show"):
        sys.stderr.write(__doc__)
        return 2
    source = read_module(argv[2])
    all_mutants = mutants(source)
    if argv[1] == "list":
        for m in all_mutants:
            r = m.record()
            print(json.dumps(r) if "--json" in argv[3:] else
                  "%s\t%d\t%s\t%s" % (r["id"], r["line"], r["operator"], r["change"]))
        return 0
    if argv[1] == "write":
        import os
        out = argv[3]
        wanted = set(argv[4:])
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "unmutated.py"), "w", encoding="utf-8") as f:
            f.write(unmutated(source))
        unknown = wanted - {m.id for m in all_mutants}
        if unknown:
            sys.stderr.write("mutate.py: no mutant named %s\n" % ", ".join(sorted(unknown)))
            return 1
        for m in all_mutants:
            if not wanted or m.id in wanted:
                with open(os.path.join(out, m.id.replace(":", "_") + ".py"), "w", encoding="utf-8") as f:
                    f.write(m.text)
        return 0
    found = [m for m in all_mutants if m.id == argv[3]] if len(argv) > 3 else []
    if not found:
        sys.stderr.write("mutate.py: no mutant named %s\n" % (argv[3] if len(argv) > 3 else "(none given)"))
        return 1
    sys.stdout.writelines(difflib.unified_diff(unmutated(source).splitlines(True), found[0].text.splitlines(True),
                                               "unmutated.py", found[0].id))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
