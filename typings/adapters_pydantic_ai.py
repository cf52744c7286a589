"""Typing cases for toolctx.adapters.pydantic_ai (checked, never run)."""

from __future__ import annotations

import dataclasses

from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.toolsets import AbstractToolset
from typing_extensions import assert_type

from toolctx import Dispatcher, ExecutionContext, Registry, Session
from toolctx.adapters.pydantic_ai import toolset


@dataclasses.dataclass
class Deps:
    user: str


dispatcher = Dispatcher(Registry())

# Without a context function the toolset takes any deps.
plain = toolset(dispatcher)
assert_type(plain, AbstractToolset[object])
Agent("test", deps_type=ExecutionContext, toolsets=[plain])
Agent("test", deps_type=Deps, toolsets=[plain])


# A context function fixes the deps type it reads.
def from_deps(run: RunContext[Deps]) -> ExecutionContext:
    return ExecutionContext(user_id=run.deps.user)


def to_session(run: RunContext[Deps]) -> Session:
    return Session("s", user_id=run.deps.user)


def to_none(run: RunContext[Any]) -> None:
    return None


async def load(run: RunContext[str]) -> Session:
    return Session(run.deps)


typed = toolset(dispatcher, context=from_deps)
assert_type(typed, AbstractToolset[Deps])
Agent("test", deps_type=Deps, toolsets=[typed])
assert_type(toolset(dispatcher, context=to_session), AbstractToolset[Deps])
assert_type(toolset(dispatcher, context=to_none), AbstractToolset[Any])
assert_type(toolset(dispatcher, context=load), AbstractToolset[str])


# Rejected: a context function that returns something else, a registry
# where the dispatcher goes, a positional context.
def wrong(run: RunContext[Deps]) -> dict[str, str]:
    return {}


toolset(dispatcher, context=wrong)  # type: ignore[arg-type]
toolset(Registry())  # type: ignore[call-overload]
toolset(dispatcher, from_deps)  # type: ignore[call-overload]
