"""``Authorization``: refuse a call whose caller lacks a permission.

The tool declares what it needs (``@tool(requires=[...])``); the caller's
permissions come from the context (:data:`PERMISSIONS`, or a policy).
The call is refused before the tool runs.
"""

from __future__ import annotations

import logging

from collections.abc import Callable, Container, Iterable, Mapping
from typing import TypeAlias, cast, final

from toolctx._context.execution import ExecutionContext
from toolctx._context.keys import ContextKey
from toolctx._frozen import freeze_mapping
from toolctx._records import ToolCall, ToolResult
from toolctx._tools.function import FunctionTool
from toolctx._tools.protocols import Tool
from toolctx._tools.registry import Registry
from toolctx.exceptions import PermissionDenied


PERMISSIONS: ContextKey[frozenset[str]] = ContextKey(
    "toolctx.permissions", frozenset[str], default=frozenset()
)
"""The permissions the caller holds, read by :class:`Authorization`.

The host sets it on the template context::

    ctx = ExecutionContext(user_id="bob").with_value(
        PERMISSIONS, frozenset({"files:read"})
    )

Unset, it is empty: tools that require nothing still run.

.. versionadded:: 0.1.0
"""

GrantedPermissions: TypeAlias = Callable[
    [ExecutionContext], Container[str] | None
]
"""A policy: the permissions the caller of this context holds.

Return any container that answers ``permission in granted`` (a
``frozenset``, or your own object implementing wildcards or roles); None
means none.

.. versionadded:: 0.1.0
"""

_NO_PERMISSIONS: frozenset[str] = frozenset()
_NO_EXTRA: Mapping[str, object] = freeze_mapping({}, "AuditRecord.extra")
_MAX_JSON_DEPTH = 64
_log = logging.getLogger("toolctx")


# -- authorization ----------------------------------------------------------


def required_permissions(tool: Tool) -> frozenset[str]:
    """Return the permissions *tool* declares it needs.

    A :class:`~toolctx.FunctionTool` declares them with
    ``@tool(requires=[...])``. Any other tool may define a
    ``permissions()`` method or a ``requires`` attribute (an iterable of
    strings, or a method returning one). Tools declaring nothing need
    nothing.

    Raises:
        TypeError: The declaration is a single string or holds non-strings.

    Example:
        >>> from toolctx import tool
        >>> @tool(requires=["files:delete"])
        ... def rm(path: str) -> None:
        ...     '''Delete a file.'''
        >>> sorted(required_permissions(rm))
        ['files:delete']

    .. versionadded:: 0.1.0
    """
    if isinstance(tool, FunctionTool):
        return tool.requires
    method = getattr(tool, "permissions", None)
    if callable(method):
        declared = method()
    else:
        declared = getattr(tool, "requires", None)
        if callable(declared):
            declared = declared()
    if declared is None:
        return _NO_PERMISSIONS
    return _permission_set(declared, f"Tool {_tool_label(tool)}")


def _tool_label(tool: Tool) -> str:
    try:
        return repr(tool.definition().name)
    except Exception:  # noqa: BLE001 - only for an error message
        return type(tool).__name__


def _permission_set(declared: object, owner: str) -> frozenset[str]:
    if isinstance(declared, str) or not isinstance(declared, Iterable):
        msg = (
            f"{owner} declares its permissions as {declared!r}; declare "
            "an iterable of strings instead, e.g. ['files:delete']."
        )
        raise TypeError(msg)
    result = frozenset(declared)
    for p in result:
        if not isinstance(p, str) or not p:
            msg = (
                f"{owner} declares the permission {p!r}; permissions are "
                "non-empty strings such as 'files:delete'."
            )
            raise TypeError(msg)
    return result


def _permissions_from_key(context: ExecutionContext) -> frozenset[str]:
    return context.get(PERMISSIONS, _NO_PERMISSIONS)


@final
class Authorization:
    """Deny calls whose caller lacks a permission the tool requires.

    Before a call runs, the tool's declared permissions (see
    :func:`required_permissions`, plus any given in *requirements*) are
    checked against what *granted* says the caller holds. A missing one
    raises :class:`PermissionDenied`, which the dispatcher turns into an
    error result naming the missing permissions; the tool does not run.
    Tools that declare nothing are allowed; unknown tools pass through
    (the dispatcher reports them). The reason never mentions the scope.

    Args:
        registry: Where to look up the called tool's declaration.
        granted: The policy: ``granted(context)`` returns the permissions
            the caller holds, typically read from ``context.scope`` or a
            typed value the host set. Defaults to the :data:`PERMISSIONS`
            value of the context.
        requirements: Extra permissions per tool name, for tools that
            cannot declare their own; added to what the tool declares.

    Raises:
        TypeError: *registry* is not a Registry, or a requirement is not
            an iterable of strings.

    Example:
        >>> from toolctx import Dispatcher, Registry, ToolCall
        >>> registry = Registry()
        >>> @registry.tool(requires=["files:delete"])
        ... def rm(path: str) -> str:
        ...     '''Delete a file.'''
        ...     return f"deleted {path}"
        >>> dispatcher = Dispatcher(
        ...     registry, interceptors=[Authorization(registry)]
        ... )
        >>> bob = ExecutionContext(user_id="bob")
        >>> call = ToolCall("rm", {"path": "a"})
        >>> print(dispatcher.dispatch(call, bob).error)
        Call to tool 'rm' was denied: it requires the permission
        'files:delete', which user 'bob' lacks. Do not retry; tell the
        user the permission is missing.
        >>> admin = bob.with_value(PERMISSIONS, frozenset({"files:delete"}))
        >>> dispatcher.dispatch(call, admin).output
        'deleted a'

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_granted", "_registry", "_requirements")

    def __init__(
        self,
        registry: Registry,
        granted: GrantedPermissions | None = None,
        *,
        requirements: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        if not isinstance(cast("object", registry), Registry):
            msg = (
                "Authorization() takes the toolctx.Registry whose tools it "
                f"guards, got {type(registry).__name__}."
            )
            raise TypeError(msg)
        self._registry = registry
        self._granted: GrantedPermissions = (
            _permissions_from_key if granted is None else granted
        )
        self._requirements = {
            name: _permission_set(perms, f"requirements[{name!r}]")
            for name, perms in (requirements or {}).items()
        }

    def __repr__(self) -> str:
        return (
            f"<toolctx.interceptors.Authorization(num_requirements="
            f"{len(self._requirements)})>"
        )

    def required(self, name: str) -> frozenset[str] | None:
        """Return what a call of tool *name* needs; None if it is unknown.

        .. versionadded:: 0.1.0
        """
        tool = self._registry.get(name)
        if tool is None:
            return None
        declared = required_permissions(tool)
        extra = self._requirements.get(name)
        return declared if extra is None else declared | extra

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Raise :class:`PermissionDenied` unless the caller may run the tool.

        Raises:
            PermissionDenied: A required permission is not granted.
            TypeError: The policy returned a string (``"a" in "abc"`` is a
                substring test, so it is refused rather than trusted).

        .. versionadded:: 0.1.0
        """
        required = self.required(call.name)
        if not required:
            return context
        held = self._granted(context)
        if isinstance(held, str):
            msg = (
                "The Authorization policy returned a string; return a "
                "collection of permissions such as frozenset({'a', 'b'})."
            )
            raise TypeError(msg)
        missing = (
            required
            if held is None
            else [p for p in required if p not in held]
        )
        if missing:
            raise PermissionDenied(call.name, missing, context.user_id)
        return context

    def after(
        self,
        call: ToolCall,  # noqa: ARG002 - the Interceptor protocol
        context: ExecutionContext,  # noqa: ARG002 - ditto
        result: ToolResult,
    ) -> ToolResult:
        """Return *result* unchanged.

        .. versionadded:: 0.1.0
        """
        return result
