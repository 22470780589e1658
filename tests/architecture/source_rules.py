"""Rules read from the source text with `ast`: what the domain imports, who reads the environment,
how long modules and functions are. Each takes a source root, so a test can plant a violation
in a copy of the tree and show the rule catches it."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
DOMAIN_ALLOWED = frozenset({"attrs", "attr"})  # besides the standard library and the domain


def modules(src: Path, package: str) -> Iterator[tuple[str, Path]]:
    """(dotted name, file) of every module of `package` under the source root `src`."""
    root = src.joinpath(*package.split("."))
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imported_names(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved,
    and of every `importlib.import_module("x")` / `__import__("x")` with a literal name."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, _absolute(package, node.module, node.level)
        elif isinstance(node, ast.Call) and _dynamic_import(node):
            arg = node.args[0] if node.args else None
            literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            yield node.lineno, arg.value if literal else "<computed name>"


def _absolute(package: str, name: str | None, level: int) -> str:
    if level == 0:
        return name or ""
    base = package.split(".")[: len(package.split(".")) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def _dynamic_import(call: ast.Call) -> bool:
    func = call.func
    named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return named in ("import_module", "__import__")


def foreign_domain_imports(src: Path = SRC) -> list[str]:
    """Imports in memory.domain of anything but the standard library, attrs and the domain."""
    found = []
    for module, path in modules(src, "memory.domain"):
        for line, name in imported_names(module, path):
            top = name.split(".")[0]
            own = name == "memory.domain" or name.startswith("memory.domain.")
            if not (own or top in sys.stdlib_module_names or top in DOMAIN_ALLOWED):
                found.append(f"{module}:{line} imports {name}")
    return found


# -- the environment --------------------------------------------------------------------------

SETTINGS = "memory.entrypoints.settings"  # the one module that reads settings from it
# Modules that hand the environment on whole (to a child process) or set switches in it,
# and why they may: none of them reads a setting from it.
ENVIRONMENT_PASSERS = {
    "memory.offline": "sets the no-egress switches before any library is imported",
    "memory.adapters.embeddings.packaged_model": "sets the Hugging Face offline switches "
                                                 "before those libraries are imported",
    "memory.adapters.embeddings.onnx_encoder": "the environment of the model-export child",
    "memory.adapters.graphify.generations": "the environment of the graph-build child",
    "memory.adapters.git.note_history": "the environment of the git child",
    "memory.adapters.git.source_control": "the environment of the git child",
    "memory.entrypoints.daemon": "the environment of the daemon child, client settings removed",
}
_READS = frozenset({"get", "pop", "__getitem__", "__contains__"})
_WHOLE = frozenset({"getenv", "getenvb"})


def environment_uses(src: Path = SRC) -> list[tuple[str, int, str]]:
    """(module, line, "read" | "pass") for every use of os.environ / os.getenv in memory."""
    found = []
    for module, path in modules(src, "memory"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        names = _os_names(tree)
        for node in ast.walk(tree):
            kind = _environment_use(node, parents, names)
            if kind:
                found.append((module, node.lineno, kind))
    return found


def environment_breaches(src: Path = SRC) -> list[str]:
    """Uses of the environment outside the rules: reads only in settings, passes only where
    ENVIRONMENT_PASSERS says why."""
    out = []
    for module, line, kind in environment_uses(src):
        if module == SETTINGS:
            continue
        if kind == "read" or module not in ENVIRONMENT_PASSERS:
            verb = "reads" if kind == "read" else "passes on"
            out.append(f"{module}:{line} {verb} the environment")
    return out


def _os_names(tree: ast.AST) -> dict[str, str]:
    """Local name -> os name, for os.environ or os.getenv bound by `from os import ...`."""
    return {alias.asname or alias.name: alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "os" and not node.level
            for alias in node.names if alias.name in ("environ", "environb", *_WHOLE)}


def _environment_use(node: ast.AST, parents: dict[ast.AST, ast.AST],
                     names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "os":
        attr = node.attr
    elif isinstance(node, ast.Name) and node.id in names:
        attr = names[node.id]
    else:
        return None
    if attr in _WHOLE:
        return "read"
    if attr not in ("environ", "environb"):
        return None
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr in _READS:
        return "read"
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load):
        return "read"
    if isinstance(parent, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn))
                                               for op in parent.ops):
        return "read"
    return "pass"


# -- sizes ------------------------------------------------------------------------------------

MAX_FUNCTION_LINES = 50  # in memory.application


def long_functions(src: Path = SRC, package: str = "memory.application") -> list[str]:
    """Functions of `package` over MAX_FUNCTION_LINES lines (decorators and docstring
    included). Modules have no cap: a use case keeps its code together."""
    out = []
    for module, path in modules(src, package):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(f"{module}:{node.lineno} {node.name}(): {length} lines")
    return out
