"""``ContextLogFilter``: the running call's ids on every log record."""

from __future__ import annotations

import logging

from collections.abc import Iterable
from typing import cast, final

from toolctx._context.current import current_context
from toolctx._text import escaped


CONTEXT_LOG_FIELDS: tuple[str, ...] = (
    "invocation_id",
    "parent_invocation_id",
    "tool_name",
    "tool_call_id",
    "session_id",
    "user_id",
    "agent_id",
    "turn",
)
"""The context fields :class:`ContextLogFilter` can add, in its order.

Only ids and the turn: the scope, metadata, state and typed values are
never copied into log records.

.. versionadded:: 0.1.0
"""


@final
class ContextLogFilter(logging.Filter):
    r"""Add the running call's ids to every log record.

    Each field in *fields* becomes an attribute named *prefix* + field
    (``record.toolctx_invocation_id``, ``record.toolctx_user_id``...) that
    format strings can use: ``%(toolctx_invocation_id)s``. Outside a call
    the attributes are None. It reads :func:`toolctx.current_context`, so
    it sees the context of the thread or task that logs, including the
    worker thread a sync tool runs in under ``adispatch``. It never drops
    a record, and it never adds the scope, metadata or state. A lone
    surrogate in a model-chosen call id or tool name is written escaped
    (``\udce9``), so that no handler fails to encode the record.

    Attach it to your **handlers** (``handler.addFilter(...)``): a filter
    on a logger does not apply to records from its child loggers. With a
    ``QueueHandler``, attach it to the ``QueueHandler`` so it runs in the
    thread that logs, not in the listener's thread.

    Args:
        prefix: Prefix of the attribute names.
        fields: Which of :data:`CONTEXT_LOG_FIELDS` to add.

    Raises:
        ValueError: *fields* names something else.

    Example:
        >>> import logging
        >>> from toolctx import ExecutionContext, use_context
        >>> log_filter = ContextLogFilter()
        >>> record = logging.makeLogRecord({"msg": "hello"})
        >>> with use_context(ExecutionContext(user_id="ada", turn=3)):
        ...     _ = log_filter.filter(record)
        >>> record.toolctx_user_id, record.toolctx_turn
        ('ada', 3)

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        prefix: str = "toolctx_",
        *,
        fields: Iterable[str] = CONTEXT_LOG_FIELDS,
    ) -> None:
        super().__init__()
        if not isinstance(cast("object", prefix), str):
            msg = f"prefix must be a str, got {type(prefix).__name__}."
            raise TypeError(msg)
        chosen = tuple(fields)
        if isinstance(fields, str):
            chosen = (fields,)
        unknown = [f for f in chosen if f not in CONTEXT_LOG_FIELDS]
        if unknown:
            msg = (
                f"ContextLogFilter cannot add {', '.join(map(repr, unknown))}"
                "; choose from " + ", ".join(CONTEXT_LOG_FIELDS) + "."
            )
            raise ValueError(msg)
        self.prefix = prefix
        self.fields = chosen
        self._attributes = tuple(prefix + f for f in chosen)
        self._none = dict.fromkeys(self._attributes)

    def __repr__(self) -> str:
        return (
            f"<toolctx.interceptors.ContextLogFilter(prefix={self.prefix!r}, "
            f"fields={self.fields!r})>"
        )

    def filter(self, record: logging.LogRecord) -> bool:
        """Set the context attributes on *record*; always keep it.

        .. versionadded:: 0.1.0
        """
        ctx = current_context()
        if ctx is None:
            record.__dict__.update(self._none)
        else:
            d = record.__dict__
            for attr, field in zip(self._attributes, self.fields, strict=True):
                value = getattr(ctx, field)
                d[attr] = escaped(value) if type(value) is str else value
        return True
