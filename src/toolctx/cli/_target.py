"""Find the registry a target names: ``module:attr`` or ``file.py:attr``.

A target is where to import from, a colon, and the attribute holding a
:class:`~toolctx.Registry` or :class:`~toolctx.Dispatcher`, or a factory
(a callable taking no arguments) that returns one. The place is a module
name (``pkg.app``), imported with the ``--app-dir`` first on ``sys.path``,
or a path to a ``.py`` file, imported with its folder first on
``sys.path`` (the folder above its package, when it is inside one), so
that its own imports work as they do under ``python path/to/app.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._tools.protocols import Tool
from toolctx._tools.registry import Registry
from toolctx.cli._report import UsageError, describe


_EXAMPLE = "app:registry or path/to/app.py:registry"
_KINDS = (Registry, Dispatcher)
_KIND_NAMES = frozenset({"Registry", "Dispatcher"})


def load_target(spec: str, *, app_dir: str) -> Dispatcher:
    """Import what *spec* names and return a dispatcher for it.

    A Registry gets a plain :class:`~toolctx.Dispatcher`; a Dispatcher is
    used as it is (its interceptors run); a factory is called once.

    Raises:
        UsageError: The target, the import or the attribute is wrong; the
            message says which and how to fix it.
    """
    where, sep, attribute = spec.rpartition(":")
    folder = _app_dir(app_dir)
    if not sep or not where or not _is_attribute(attribute):
        _no_attribute(spec, folder)
    _prepend_path(folder)
    module, label = _load(where)
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            msg = (
                f"{label} has no attribute {attribute!r}{_candidates(module)}"
            )
            raise UsageError(msg) from None
        except Exception as exc:  # noqa: BLE001 - the user's __getattr__
            msg = f"reading {spec} failed: {describe(exc)}"
            raise UsageError(msg) from None
    return _as_dispatcher(value, spec, module)


def _is_attribute(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def _no_attribute(spec: str, folder: Path) -> NoReturn:
    """Refuse a malformed target, naming the fix.

    When *spec* is just a module or file that imports, the message lists
    what it holds that can be a target, and the example uses it.
    """
    where, sep, attribute = spec.rpartition(":")
    example, found = _EXAMPLE, ""
    if not sep:
        fix = "no colon: add one and the variable holding the registry"
        if spec:
            _prepend_path(folder)
            try:
                module = _load(spec)[0]
            except UsageError:
                pass
            else:
                names = _candidate_names(module)
                if names:
                    example = f"{spec}:{names[0].removesuffix('()')}"
                found = _candidates(module)
    elif not where:
        fix = "name the module or file before the colon"
    else:
        fix = f"the attribute {attribute!r} is not a Python name"
    msg = (
        f"{spec!r} is not a MODULE:ATTRIBUTE or FILE.py:ATTRIBUTE target "
        f"({fix}), e.g. {example}{found}"
    )
    raise UsageError(msg)


def _app_dir(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.is_dir():
        msg = (
            f"argument --app-dir: {text!r} is not a directory (looked for "
            f"{path.absolute()}); name the folder to import from"
        )
        raise UsageError(msg)
    return path.resolve()


def _prepend_path(folder: Path) -> None:
    """Put *folder* first on ``sys.path`` (once)."""
    entry = str(folder)
    if sys.path[:1] != [entry]:
        sys.path.insert(0, entry)


def _is_file(where: str) -> bool:
    seps = {"/", os.sep, os.altsep or "/"}
    return where.endswith(".py") or any(sep in where for sep in seps)


def _load(where: str) -> tuple[ModuleType, str]:
    """The module *where* names, and how messages refer to it."""
    if _is_file(where):
        return _load_file(where), f"file {where!r}"
    return _import(where), f"module {where!r}"


def _load_file(where: str) -> ModuleType:
    """Import the ``.py`` file *where*, its own imports working."""
    path = Path(where).expanduser().absolute()
    if not path.exists():
        msg = (
            f"no such file: {where!r} (looked for {path}); give the path of "
            "the .py file that defines the registry"
        )
        raise UsageError(msg)
    if path.is_dir() or path.suffix != ".py":
        msg = (
            f"{where!r} is not a Python file; give the path of the .py file "
            "that defines the registry"
        )
        raise UsageError(msg)
    path = path.resolve()
    base, name = _module_name(path)
    _prepend_path(base)
    if not all(part.isidentifier() for part in name.split(".")):
        return _exec_file(path, name, where)
    module = _import(name, label=repr(where))
    loaded = getattr(module, "__file__", None)
    if loaded is None or Path(loaded).resolve() != path:
        msg = (
            f"cannot load {where!r} as module {name!r}: that name is "
            f"already taken by {loaded or 'a built-in module'}; rename the "
            "file"
        )
        raise UsageError(msg)
    return module


def _module_name(path: Path) -> tuple[Path, str]:
    """The folder to import from, and the file's dotted module name.

    A file inside a package (folders with ``__init__.py``) is imported as
    part of it, so that its relative imports work.
    """
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _exec_file(path: Path, name: str, where: str) -> ModuleType:
    """Load a file whose name is no identifier (``my-app.py``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file
        msg = f"cannot load {str(path)!r} as Python code"
        raise UsageError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's file
        del sys.modules[name]
        msg = f"importing {where!r} failed: {describe(exc)}"
        raise UsageError(msg) from None
    return module


def _import(name: str, *, label: str | None = None) -> ModuleType:
    what = f"module {name!r}" if label is None else label
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (
            name == exc.name or name.startswith(exc.name + ".")
        ):
            msg = (
                f"cannot import module {name!r}: {exc}. Run toolctx from "
                "the folder that contains it, pass --app-dir FOLDER, give "
                "the file's path (path/to/app.py:registry), or install its "
                "package."
            )
        else:
            msg = f"importing {what} failed: {describe(exc)}"
        raise UsageError(msg) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module
        # SystemExit too: a script that parses sys.argv when imported.
        msg = f"importing {what} failed: {describe(exc)}"
        raise UsageError(msg) from None


def _as_dispatcher(value: object, spec: str, module: ModuleType) -> Dispatcher:
    if isinstance(value, Tool):  # before callable(): a FunctionTool is one
        msg = (
            f"{spec} is a tool, not a registry; name the Registry or "
            f"Dispatcher that holds it{_candidates(module)}"
        )
        raise UsageError(msg)
    if not isinstance(value, _KINDS) and callable(value):
        value = _call_factory(value, spec)
    if isinstance(value, Dispatcher):
        return value
    if isinstance(value, Registry):
        return Dispatcher(value)
    msg = (
        f"{spec} is {_a(type(value).__name__)}, not a toolctx Registry or "
        f"Dispatcher (or a factory returning one){_candidates(module)}"
    )
    raise UsageError(msg)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _call_factory(factory: Callable[..., object], spec: str) -> object:
    """Call a factory target with no arguments; check what it returns."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - some builtins
        signature = None
    if signature is not None:
        try:
            signature.bind()
        except TypeError:
            msg = (
                f"{spec} is a factory that needs arguments "
                f"{signature.replace(return_annotation=signature.empty)}; a "
                "factory target is called with none: give the parameters "
                "defaults, or name a function that calls it"
            )
            raise UsageError(msg) from None
    try:
        made = factory()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code
        msg = f"calling the factory {spec}() failed: {describe(exc)}"
        raise UsageError(msg) from None
    if isinstance(made, _KINDS):
        return made
    if inspect.isawaitable(made):
        close = getattr(made, "close", None)
        if callable(close):
            close()  # never awaited: no RuntimeWarning
        msg = (
            f"{spec}() returned an awaitable; a factory target must be a "
            "plain function that returns the Registry or Dispatcher"
        )
        raise UsageError(msg)
    msg = (
        f"{spec}() returned {_a(type(made).__name__)}, not a toolctx "
        "Registry or Dispatcher"
    )
    raise UsageError(msg)


def _candidates(module: ModuleType) -> str:
    """What *module* holds that can be a target, for an error message."""
    names = _candidate_names(module)
    if not names:
        return "; it defines no Registry or Dispatcher at module level"
    return "; registries and dispatchers there: " + ", ".join(names)


def _candidate_names(module: ModuleType) -> list[str]:
    """The Registry/Dispatcher variables of *module*, then its factories."""
    found: list[str] = []
    factories: list[str] = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, _KINDS):
            found.append(name)
        elif _is_factory(value, module):
            factories.append(f"{name}()")
    return sorted(found) + sorted(factories)


def _is_factory(value: object, module: ModuleType) -> bool:
    """A function of *module* returning a Registry/Dispatcher, no arguments.

    Judged by its return annotation.
    """
    if (
        not inspect.isfunction(value)
        or value.__module__ != module.__name__
        or inspect.iscoroutinefunction(value)
    ):
        return False
    try:
        inspect.signature(value).bind()
    except TypeError:
        return False
    returned = value.__annotations__.get("return")
    if isinstance(returned, str):
        return returned.rpartition(".")[2] in _KIND_NAMES
    return isinstance(returned, type) and issubclass(returned, _KINDS)
