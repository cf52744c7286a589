"""Typing cases: the LangChain adapter."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from typing_extensions import assert_type

from toolctx import Dispatcher, ExecutionContext, Registry, Session
from toolctx.adapters.langchain import (
    CONFIG_KEY,
    ContextFactory,
    default_context,
    graph_context,
    tools,
)


registry = Registry()
dispatcher = Dispatcher(registry)


def from_config(config: RunnableConfig) -> ExecutionContext:
    user = config.get("configurable", {}).get("user_id")
    return ExecutionContext(user_id=user)


def session_for(config: RunnableConfig) -> Session:
    return Session(str(graph_context(config)))


assert_type(tools(dispatcher), list[BaseTool])
assert_type(tools(dispatcher, context=from_config), list[BaseTool])
assert_type(tools(dispatcher, context=session_for), list[BaseTool])
assert_type(tools(dispatcher, context=lambda config: None), list[BaseTool])
assert_type(default_context({}), ExecutionContext | Session | None)
assert_type(graph_context({}), Any)
assert_type(CONFIG_KEY, Literal["toolctx_context"])

factory: ContextFactory = default_context
message = tools(dispatcher)[0].invoke(
    {"type": "tool_call", "name": "x", "args": {}, "id": "c1"},
    config={"configurable": {CONFIG_KEY: ExecutionContext(user_id="ada")}},
)
assert_type(message, Any)
assert isinstance(message, ToolMessage)


def no_config() -> ExecutionContext:
    return ExecutionContext()


# Rejected: a registry is not a dispatcher; the callable takes the config.
tools(registry)  # type: ignore[arg-type]
tools(dispatcher, context=no_config)  # type: ignore[arg-type]
tools(dispatcher, context=ExecutionContext())  # type: ignore[arg-type]
