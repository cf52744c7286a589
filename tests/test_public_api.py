"""The public surface matches the contract and resolves its hints."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import types
import typing

from pathlib import Path

import pytest

import toolctx


CONTRACT = {
    "ExecutionContext",
    "ContextKey",
    "execution_context",
    "current_context",
    "use_context",
    "publish",
    "set_state",
    "Tool",
    "ToolDefinition",
    "tool",
    "FunctionTool",
    "Registry",
    "ToolCall",
    "ToolResult",
    "Dispatcher",
    "Session",
    "Interceptor",
    "ToolctxError",
    "NoExecutionContextError",
    "MissingContextValueError",
    "ScopeError",
    "DuplicateToolError",
    "UnknownToolError",
    "InvalidToolNameError",
    "ToolArgumentsError",
    "ToolDenied",
    "SchemaError",
}


class TestPublicAPI:
    """What `import toolctx` offers."""

    def test_all_is_sorted_and_complete(self) -> None:
        """__all__ has no duplicates, imports, and holds the contract's names."""
        assert len(set(toolctx.__all__)) == len(toolctx.__all__)
        for name in toolctx.__all__:
            assert hasattr(toolctx, name), name
        assert set(toolctx.__all__) >= CONTRACT

    def test_all_matches_public_names(self) -> None:
        """Every public attribute of the package is listed in __all__."""
        public = {
            n
            for n, v in vars(toolctx).items()
            if not n.startswith("_")
            and not inspect.ismodule(v)
            and n not in {"annotations", "Any"}
        }
        assert public == set(toolctx.__all__)

    def test_every_public_name_is_documented(self) -> None:
        """Every public class and function has a versionadded docstring."""
        for name in toolctx.__all__:
            obj = getattr(toolctx, name)
            if isinstance(obj, types.GenericAlias) or not (
                inspect.isclass(obj) or inspect.isfunction(obj)
            ):
                continue  # type aliases and constants are documented in text
            doc = obj.__doc__ or ""
            assert doc.strip(), name
            assert "versionadded" in doc, name

    def test_type_hints_resolve(self) -> None:
        """get_type_hints works on every public class and function."""
        for name in toolctx.__all__:
            obj = getattr(toolctx, name)
            if inspect.isclass(obj):
                typing.get_type_hints(obj)
                for attr in vars(obj).values():
                    if inspect.isfunction(attr):
                        typing.get_type_hints(attr)
            elif inspect.isfunction(obj):
                typing.get_type_hints(obj)

    def test_error_hierarchy(self) -> None:
        """Every error inherits ToolctxError; builtin bases where promised."""
        for name in CONTRACT:
            obj = getattr(toolctx, name)
            if inspect.isclass(obj) and issubclass(obj, Exception):
                assert issubclass(obj, toolctx.ToolctxError), name
        assert issubclass(toolctx.NoExecutionContextError, LookupError)
        assert issubclass(toolctx.UnknownToolError, KeyError)

    def test_version(self) -> None:
        """__version__ comes from the installed metadata."""
        assert toolctx.__version__ == "0.1.0"


MERGED_PUBLIC_MODULES = [
    "toolctx.exceptions",
    "toolctx.otel",
    "toolctx.providers.anthropic",
    "toolctx.providers.gemini",
    "toolctx.providers.openai",
    "toolctx.sessions.sqlite",
]
"""Public modules that private modules were merged into."""


def _defined_names(module: types.ModuleType) -> set[str]:
    """The names *module*'s own file defines at its top level."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(
            node.target, ast.Name
        ):
            names.add(node.target.id)
    return names - {"__all__"}


class TestPublicModules:
    """Names in public modules say what is public: ``__all__`` or ``_``."""

    @pytest.mark.parametrize("name", MERGED_PUBLIC_MODULES)
    def test_all_names_are_importable(self, name: str) -> None:
        """Every name a public module lists in __all__ imports from it."""
        module = importlib.import_module(name)
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert missing == []

    @pytest.mark.parametrize("name", MERGED_PUBLIC_MODULES)
    def test_every_name_defined_is_listed_or_private(self, name: str) -> None:
        """A public module's own names are in __all__ or start with ``_``."""
        module = importlib.import_module(name)
        unmarked = sorted(
            n
            for n in _defined_names(module)
            if not n.startswith("_") and n not in module.__all__
        )
        assert unmarked == []

    def test_exceptions_pickle_by_their_public_module(self) -> None:
        """Exceptions name ``toolctx.exceptions`` in a pickle, not a helper."""
        from toolctx import exceptions

        for name in exceptions.__all__:
            obj = getattr(exceptions, name)
            if inspect.isclass(obj):
                assert obj.__module__ == "toolctx.exceptions", name
        error = exceptions.UnknownToolError("missing", ["a", "b"])
        data = pickle.dumps(error)
        assert b"toolctx.exceptions" in data
        again = pickle.loads(data)
        assert (type(again), str(again)) == (type(error), str(error))
