"""The public surface matches the contract and resolves its hints."""

from __future__ import annotations

import inspect
import types
import typing

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
