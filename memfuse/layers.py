"""The import-direction check: `python -m memfuse.layers [ROOT]`.

MemFuse is four layers, each importing only the ones below it:
`memfuse` (API, CLI) → `graphs` (LangGraph state machines) → `signatures` (DSPy decisions and
their offline twins) → `memory` (stores, indexes, search, input formats; never an LLM). `eval`
(the benchmark) may use all of them and nothing may use it, so the public package never drags
in the benchmark (its commands reach `memfuse` as an entry-point plugin, not an import).
Imports inside functions count too: a lazy import is still a dependency, it is only paid for
later; so do `TYPE_CHECKING` imports, relative imports (resolved against the importing
package) and `importlib.import_module("…")` / `__import__("…")` with a literal name. `memory`
may not import an LLM framework at all (dspy, litellm, langgraph).

The check reads the source with `ast` (nothing is imported or run) and exits 1 listing every
violation as `path:line: memory → graphs (graphs.x)`; a file that does not parse is listed
too (it cannot be checked), and a ROOT without any layer package exits 2.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Lower rank = lower layer; a module may import packages of its own rank or below.
RANKS: dict[str, int] = {"memory": 0, "signatures": 1, "graphs": 2, "memfuse": 3, "eval": 4}
# Packages nothing else may import, whatever their rank.
PRIVATE = ("eval",)
# Third-party packages that drive LLM calls: the bottom layer stays free of them. (An
# OpenAI-compatible *embedding* client is allowed there: embedding is not a decision.)
LLM_CLIENTS = ("dspy", "litellm", "langgraph")
NO_LLM_LAYERS = ("memory",)
_DYNAMIC_IMPORTS = ("import_module", "__import__")


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    importer: str
    imported: str
    module: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} → {self.imported} ({self.module})"


@dataclass(frozen=True)
class Unparsable:
    """A layer file `ast` cannot read: its imports are unknown, so the check cannot pass."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: cannot parse ({self.reason}); imports not checked"


def _resolve(node: ast.ImportFrom, package: str | None) -> list[str]:
    """Absolute names a `from … import …` makes the file depend on.

    `from . import x` names no module, so the imported names are the modules: from a
    top-level package, `from .. import graphs` depends on `graphs` itself.
    """
    if not node.level:
        return [node.module or ""]
    parts = package.split(".") if package else []
    base = parts[: max(len(parts) - node.level + 1, 0)]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, alias.name]) for alias in node.names]


def _dynamic_import(node: ast.Call) -> str | None:
    """The literal module name of `importlib.import_module("x")` or `__import__("x")`."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _DYNAMIC_IMPORTS or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def imported_modules(tree: ast.AST, package: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the tree, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            for name in _resolve(node, package):
                yield node.lineno, name
        elif isinstance(node, ast.Call) and (name := _dynamic_import(node)) is not None:
            yield node.lineno, name


def _forbidden(layer: str, top: str) -> bool:
    if top in RANKS and top != layer:
        return top in PRIVATE or RANKS[top] > RANKS[layer]
    return layer in NO_LLM_LAYERS and top in LLM_CLIENTS


def check_file(path: Path, root: Path) -> list[Violation | Unparsable]:
    """The violations of one file (`path` under `root`, the repository)."""
    relative = path.relative_to(root)
    layer = relative.parts[0]
    if layer not in RANKS:
        return []
    package = ".".join(relative.with_suffix("").parts[:-1])
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return [Unparsable(relative, line, type(exc).__name__)]
    found: list[Violation | Unparsable] = []
    for line, module in imported_modules(tree, package):
        top = module.split(".")[0]
        if _forbidden(layer, top):
            found.append(Violation(relative, line, layer, top, module))
    return found


def layer_files(root: Path) -> list[Path]:
    """Every Python file of every layer package under `root`, in layer then path order."""
    return [path for layer in RANKS for path in sorted((root / layer).rglob("*.py"))]


def check_tree(root: Path) -> list[Violation | Unparsable]:
    """Every violation under `root` (the repository), in path order."""
    return [violation for path in layer_files(root) for violation in check_file(path, root)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    if not any((root / layer).is_dir() for layer in RANKS):
        print(f"{root}: no layer package ({', '.join(RANKS)}) to check", file=sys.stderr)
        return 2
    violations = check_tree(root)
    for violation in violations:
        print(violation)
    order = " → ".join(name for name in sorted(RANKS, key=RANKS.get, reverse=True)[1:])
    print(
        f"{len(layer_files(root))} files checked, {len(violations)} imports against the "
        f"layering (eval → {order}; nothing imports eval; memory imports no LLM client)"
    )
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
