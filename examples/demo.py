"""A scripted agent loop: a recorded model conversation drives real tools.

No network and no model: the "model" is a recording of the tool calls a
model asked for over two turns. The tools read the ExecutionContext that
the dispatcher binds for each call:

- ``delete_document`` checks the caller's permission before a destructive
  action and refuses another user's document;
- ``audit_note`` writes an audit line with user, session, turn and
  invocation id;
- ``WeatherTool`` is a legacy class with a plain ``execute(args)`` that
  knows nothing about toolctx and keeps working unchanged.

Run: ``python examples/demo.py``
"""

from __future__ import annotations

import json

from collections.abc import Mapping
from typing import Any

from toolctx import (
    Dispatcher,
    Registry,
    Session,
    ToolCall,
    ToolDefinition,
    ToolResult,
    execution_context,
    set_state,
)


DOCUMENTS = {
    "doc-1": {"owner": "ada", "title": "Engine notes"},
    "doc-2": {"owner": "ada", "title": "Old draft"},
    "doc-3": {"owner": "bob", "title": "Bob's budget"},
}
AUDIT_LOG: list[str] = []

registry = Registry()


@registry.tool
def list_documents() -> list[dict[str, str]]:
    """List the documents the calling user owns."""
    user = execution_context().user_id
    return [
        {"id": doc_id, "title": doc["title"]}
        for doc_id, doc in DOCUMENTS.items()
        if doc["owner"] == user
    ]


@registry.tool
def delete_document(doc_id: str) -> str:
    """Delete one of the calling user's documents.

    Args:
        doc_id: The id of the document, as returned by list_documents.
    """
    ctx = execution_context()
    doc = DOCUMENTS.get(doc_id)
    if doc is None:
        msg = f"no document {doc_id!r}; call list_documents first"
        raise LookupError(msg)
    if doc["owner"] != ctx.user_id:
        msg = f"{ctx.user_id} may not delete {doc_id}: another user owns it"
        raise PermissionError(msg)
    del DOCUMENTS[doc_id]
    deleted = [*ctx.state.get("deleted", ()), doc_id]  # type: ignore[call-overload]
    set_state("deleted", deleted)
    return f"deleted {doc_id} ({doc['title']})"


@registry.tool
def audit_note(note: str) -> str:
    """Write a line to the audit log.

    Args:
        note: What happened, in one sentence.
    """
    ctx = execution_context()
    line = (
        f"user={ctx.user_id} session={ctx.session_id} turn={ctx.turn} "
        f"invocation={ctx.invocation_id[:12]}... call={ctx.tool_call_id} "
        f"note={note!r}"
    )
    AUDIT_LOG.append(line)
    return "noted"


class WeatherTool:
    """A legacy tool: a plain class with execute(args), no toolctx import."""

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name="get_weather",
            description="Current weather for a city.",
            parameters={
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        )

    def execute(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"city": args["city"], "temp_c": 21, "sky": "clear"}


registry.register(WeatherTool())

# What a model asked for, turn by turn (as a provider would send it).
RECORDING = [
    (
        "What do I have, and is it nice out in Paris?",
        [
            ToolCall("list_documents", "{}", "call_1"),
            ToolCall("get_weather", '{"city": "Paris"}', "call_2"),
        ],
    ),
    (
        "Delete my old draft. Oh, and Bob's budget too.",
        [
            ToolCall("delete_document", '{"doc_id": "doc-2"}', "call_3"),
            ToolCall("delete_document", '{"doc_id": "doc-3"}', "call_4"),
            ToolCall("delete_document", '{"doc_id": 3}', "call_5"),
            ToolCall("audit_note", '{"note": "cleanup requested"}', "call_6"),
        ],
    ),
]


def show(call: ToolCall, result: ToolResult) -> None:
    """Print one call and its outcome."""
    print(f"  -> {call.name}({call.arguments})  [{call.id}]")
    if result.is_error:
        print(f"     ERROR for the model: {result.error}")
    else:
        print(f"     result: {json.dumps(result.output)}")


def main() -> None:
    """Replay the recording through a real dispatcher."""
    dispatcher = Dispatcher(registry)
    session = Session("chat-42", user_id="ada")
    print("Tools the model sees:", ", ".join(registry))
    print(f"Tool list fingerprint: {registry.fingerprint()[:16]}...\n")
    for message, calls in RECORDING:
        turn = session.next_turn()
        print(f"Turn {turn} - user ada: {message!r}")
        for call, result in zip(
            calls, dispatcher.dispatch_all(calls, session), strict=True
        ):
            show(call, result)
        print()
    print("Session state after two turns:", dict(session.state))
    print("Documents left:", ", ".join(sorted(DOCUMENTS)))
    print("Audit log:")
    for line in AUDIT_LOG:
        print("  " + line)


if __name__ == "__main__":
    main()
