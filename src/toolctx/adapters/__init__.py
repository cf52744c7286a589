"""toolctx tools inside the agent frameworks, each an optional extra.

=========================  =================================================
module                     framework
=========================  =================================================
:mod:`.openai_agents`      OpenAI Agents SDK (``toolctx[openai-agents]``)
:mod:`.langchain`          LangChain / LangGraph (``toolctx[langchain]``)
:mod:`.pydantic_ai`        Pydantic AI (``toolctx[pydantic-ai]``)
=========================  =================================================

Each adapter turns a :class:`~toolctx.Dispatcher`'s registry into the
framework's own tool objects; invoking one dispatches the call through
the dispatcher, with an :class:`~toolctx.ExecutionContext` built from the
framework's own run context. Error results reach the framework's model as
toolctx words them; the scope and host-only data never do. A module
imports its framework only when it is imported itself.
"""
