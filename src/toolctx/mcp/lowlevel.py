"""The SDK's low-level ``Server``, announcing ``tools.listChanged``.

Imported only when a server is built: it needs the ``mcp`` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from mcp.server.lowlevel import NotificationOptions, Server


if TYPE_CHECKING:
    from mcp.server.models import InitializationOptions


@final
class ToolctxServer(Server[dict[str, Any]]):
    """A low-level ``Server`` whose tools capability has ``listChanged``.

    The SDK derives ``listChanged`` from the ``NotificationOptions``
    passed to :meth:`create_initialization_options`, which its own
    transports and most callers leave out; this server sends
    ``notifications/tools/list_changed``, so it says so by default.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, with ``tools.listChanged: true`` by default."""
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=True)
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )
