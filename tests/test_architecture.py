"""The package's shape: no import cycle, the stages and the arrows they never draw, and the size of modules and
functions.

The import graph is read from the source with :mod:`ast`, every ``import`` and ``from ... import`` at any level
(module, function, ``TYPE_CHECKING``), relative imports resolved; ``from pkg import name`` counts as an import of
``pkg.name`` where that is a module, else of ``pkg``. The stages, lowest first::

    model -> providers -> raster -> readers -> compaction -> serve, cli, integrations

A module may import its own stage and those before it, never one after it; ``model`` imports only
:mod:`snapglyph.errors` and :mod:`snapglyph._config` beside itself, and nothing in ``snapglyph`` imports the bundled
agent loop (``agent_demo``, installed as ``snapglyph_agent_demo``). Sizes (house rules: modules under ~450 lines,
functions under ~60 lines of code, not counting blank lines, comments and docstrings) are reported, not enforced:
``python tests/test_architecture.py`` prints the graph's cycles and the modules and functions over the limits.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "snapglyph"
MODULE_LINES = 450
FUNCTION_LINES = 60

STAGES = ("model", "providers", "raster", "readers", "compaction", "doors")
"""The stages in order; ``doors`` are serve, cli and integrations."""
DOORS = {"serve", "integrations", "cli", "_cli_grammar", "__main__"}
BASE = {"errors", "_config"}
"""What every stage may import (``model`` only these)."""
AGENT_DEMO = ("agent_demo", "snapglyph_agent_demo")


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (path, is a package ``__init__``)."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def imports(mods: dict) -> tuple[dict[str, set[str]], dict[tuple[str, str], int], list[tuple[str, str, int]]]:
    """The import graph: module -> modules of the package it imports; the first line of each arrow; and every
    import of a name outside the package as ``(module, imported name, line)``."""
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], int] = {}
    outside = []
    for name, (path, is_pkg) in mods.items():
        package = name if is_pkg else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != PACKAGE:
                    outside.append((name, target, node.lineno))
                    continue
                while target not in mods and "." in target:
                    target = target.rpartition(".")[0]
                if target != name:
                    graph[name].add(target)
                    where.setdefault((name, target), node.lineno)
    return graph, where, outside


def cycles(graph: dict[str, set[str]], nodes) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def stage(module: str) -> str | None:
    """The stage of a module (None for the package's own root modules that belong to none)."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    if parts[1] in DOORS:
        return "doors"
    if parts[1] in STAGES:
        return parts[1]
    return None


def _code_lines(source: str, node: ast.AST) -> int:
    """Lines of ``node`` that hold code: not blank, not only a comment, not part of a docstring."""
    docs = set()
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and body and isinstance(
                body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    code = set()
    lines = source.splitlines(keepends=True)[node.lineno - 1:node.end_lineno]
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            for line in range(tok.start[0], tok.end[0] + 1):
                code.add(line + node.lineno - 1)
    return len(code - docs)


def sizes() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Modules over :data:`MODULE_LINES` lines and functions over :data:`FUNCTION_LINES` lines of code."""
    big_modules, big_functions = [], []
    for path, _ in modules().values():
        source = path.read_text(encoding="utf-8")
        n = source.count("\n")
        if n > MODULE_LINES:
            big_modules.append((str(path.relative_to(ROOT)), n))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(source, node)
                if n > FUNCTION_LINES:
                    big_functions.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", n))
    return big_modules, big_functions


@pytest.fixture(scope="module")
def graph():
    mods = modules()
    return (mods, *imports(mods))


def test_the_graph_reads_every_kind_of_import(graph):
    """The reader sees module-level, function-level and TYPE_CHECKING imports, and resolves relative ones: a check
    that cannot find an arrow could not fail."""
    mods, edges, _, _ = graph
    assert len(mods) > 100
    assert "snapglyph.raster.native" in edges["snapglyph.raster.render"]  # module level, relative
    assert "snapglyph.raster.pool" in edges["snapglyph.raster.render"]  # inside render_document
    assert "snapglyph.compaction.sticky" in edges["snapglyph.compaction.result"]  # under TYPE_CHECKING
    assert "snapglyph.raster._line_kernels" in edges["snapglyph.raster.native"]  # from . import a, b
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, "abcd") == [["a", "b", "c"]]


def test_no_import_cycle(graph):
    mods, edges, where, _ = graph
    found = cycles(edges, sorted(mods))
    assert not found, "\n".join(" <-> ".join(c) + ": " + ", ".join(f"{a} -> {b} (line {where[a, b]})" for a in c
                                                                     for b in sorted(edges[a] & set(c)))
                                for c in found)


def test_no_stage_imports_a_later_stage(graph):
    """model -> providers -> raster -> readers -> compaction -> serve, cli, integrations: no arrow points back up
    (e.g. raster never imports compaction, readers or serve; providers never import raster, readers, compaction or
    serve)."""
    _, edges, where, _ = graph
    back = [f"{a} -> {b} (line {where[a, b]})" for a in sorted(edges) for b in sorted(edges[a])
            if stage(a) and stage(b) and STAGES.index(stage(b)) > STAGES.index(stage(a))]
    assert not back, back
    assert stage("snapglyph.serve.app") == stage("snapglyph.cli") == "doors" and stage("snapglyph.errors") is None


def test_model_imports_only_errors_and_config(graph):
    _, edges, where, _ = graph
    wrong = [f"{a} -> {b} (line {where[a, b]})" for a in sorted(edges) if stage(a) == "model"
             for b in sorted(edges[a]) if stage(b) != "model" and b.split(".", 1)[-1] not in BASE]
    assert not wrong, wrong


def test_base_modules_import_no_stage(graph):
    _, edges, _, _ = graph
    wrong = [f"{a} -> {b}" for a in (f"{PACKAGE}.{m}" for m in BASE) for b in sorted(edges.get(a, ())) if stage(b)]
    assert not wrong, wrong


def test_nothing_in_the_package_imports_the_agent_demo(graph):
    _, _, _, outside = graph
    wrong = [f"{m} imports {t} (line {line})" for m, t, line in outside if t.split(".")[0] in AGENT_DEMO]
    assert not wrong, wrong


def test_sizes_are_reported():
    """Modules over ~450 lines and functions over ~60 lines of code, listed (a report: they are split where they
    are worked on, by what belongs together). The counter itself is checked on a known function."""
    src = 'def f():\n    """Doc\n    string."""\n    # a comment\n\n    x = (1,\n         2)\n    return x\n'
    assert _code_lines(src, ast.parse(src).body[0]) == 4  # def, the two lines of x, return
    big_modules, big_functions = sizes()
    for path, n in big_modules:
        print(f"module over {MODULE_LINES} lines: {path} ({n})")
    for where, n in big_functions:
        print(f"function over {FUNCTION_LINES} lines of code: {where} ({n})")


if __name__ == "__main__":  # python tests/test_architecture.py
    mods = modules()
    edges, where, _ = imports(mods)
    for c in cycles(edges, sorted(mods)):
        print("cycle:", " <-> ".join(c))
    for path, n in sizes()[0]:
        print(f"module over {MODULE_LINES} lines: {path} ({n})")
    for where_, n in sizes()[1]:
        print(f"function over {FUNCTION_LINES} lines of code: {where_} ({n})")
    sys.exit(0)
