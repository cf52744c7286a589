"""Typing cases: toolctx tools as OpenAI Agents SDK FunctionTools."""

from __future__ import annotations

import dataclasses

from agents import FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext
from typing_extensions import assert_type

from toolctx import Dispatcher, ExecutionContext, Registry, Session
from toolctx.adapters.openai_agents import ContextFunction, function_tools


@dataclasses.dataclass
class App:
    user: str


dispatcher = Dispatcher(Registry())

assert_type(function_tools(dispatcher), list[FunctionTool])


def by_user(
    wrapper: RunContextWrapper[App], tool_context: ToolContext[App]
) -> ExecutionContext:
    return ExecutionContext(user_id=wrapper.context.user)


async def by_session(
    wrapper: RunContextWrapper[App], tool_context: ToolContext[App]
) -> Session:
    return Session("s1", user_id=wrapper.context.user)


def nothing(
    wrapper: RunContextWrapper[App], tool_context: ToolContext[App]
) -> None:
    return None


assert_type(function_tools(dispatcher, context=by_user), list[FunctionTool])
assert_type(function_tools(dispatcher, context=by_session), list[FunctionTool])
assert_type(function_tools(dispatcher, context=nothing), list[FunctionTool])
mapping: ContextFunction = by_user

# Rejected: not a dispatcher; a context that returns something else.
function_tools(Registry())  # type: ignore[arg-type]


def by_name(
    wrapper: RunContextWrapper[App], tool_context: ToolContext[App]
) -> str:
    return wrapper.context.user


function_tools(dispatcher, context=by_name)  # type: ignore[arg-type]
