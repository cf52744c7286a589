"""Typing cases: provider values are the SDKs' own params, with no cast.

The functions are never run: mypy checks that toolctx's TypedDicts are
assignable to the real client methods' parameters of the installed
``openai``, ``anthropic`` and ``google-genai`` packages.
"""

from __future__ import annotations

import anthropic as anthropic_sdk
import openai as openai_sdk

from google import genai
from google.genai import types as genai_types
from mcp import types as mcp_types
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_input_param import (
    FunctionCallOutput,
    ResponseInputItemParam,
)
from typing_extensions import assert_type

from toolctx import Dispatcher, Registry, ToolCall, ToolResult
from toolctx.providers import anthropic, gemini, mcp, openai


registry = Registry()
dispatcher = Dispatcher(registry)


def _chat(client: openai_sdk.OpenAI, result: ToolResult) -> None:
    tools = openai.tools(registry)
    assert_type(tools, list[openai.ChatCompletionFunctionToolParam])
    message = openai.result_message(result)
    assert_type(message, openai.ChatCompletionToolMessageParam)
    completion = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "hi"}, message],
        tools=openai.tools(registry, strict=True),
    )
    calls = openai.parse_calls(completion)
    assert_type(calls, list[ToolCall])
    history: list[ChatCompletionMessageParam] = []
    history.extend(
        openai.result_message(r) for r in dispatcher.dispatch_all(calls)
    )
    sdk_tool: ChatCompletionToolParam = tools[0]
    assert_type(
        openai.parse_calls(completion.choices[0].message), list[ToolCall]
    )
    del sdk_tool


async def _chat_async(
    client: openai_sdk.AsyncOpenAI, result: ToolResult
) -> None:
    await client.chat.completions.create(
        model="gpt-test",
        messages=[openai.result_message(result)],
        tools=openai.tools(registry),
    )


def _responses(client: openai_sdk.OpenAI, result: ToolResult) -> None:
    tools = openai.responses_tools(registry)
    assert_type(tools, list[openai.FunctionToolParam])
    item = openai.responses_result_item(result)
    assert_type(item, openai.FunctionCallOutput)
    response = client.responses.create(
        model="gpt-test",
        input=[item],
        tools=tools,
    )
    calls = openai.parse_responses_calls(response)
    client.responses.create(
        model="gpt-test",
        previous_response_id=response.id,
        input=[
            openai.responses_result_item(r)
            for r in dispatcher.dispatch_all(calls)
        ],
        tools=openai.responses_tools(registry, strict=True),
    )
    sdk_tool: FunctionToolParam = tools[0]
    sdk_item: FunctionCallOutput = item
    any_item: ResponseInputItemParam = item
    del sdk_tool, sdk_item, any_item


def _anthropic(client: anthropic_sdk.Anthropic, result: ToolResult) -> None:
    tools = anthropic.tools(registry)
    assert_type(tools, list[anthropic.ToolParam])
    reply = anthropic.results_message([result])
    assert_type(reply, anthropic.UserMessageParam)
    assert_type(anthropic.result_message(result), anthropic.UserMessageParam)
    assert_type(anthropic.result_block(result), anthropic.ToolResultBlockParam)
    message = client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=[{"role": "user", "content": "hi"}, reply],
        tools=tools,
    )
    calls = anthropic.parse_calls(message)
    client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=[
            {"role": "assistant", "content": message.content},
            anthropic.results_message(dispatcher.dispatch_all(calls)),
        ],
        tools=anthropic.tools(registry),
    )
    block: anthropic_sdk.types.ToolResultBlockParam = anthropic.result_block(
        result
    )
    del block


def _gemini(client: genai.Client, result: ToolResult) -> None:
    tools = gemini.tools(registry)
    assert_type(tools, list[gemini.ToolDict])
    content = gemini.results_message([result])
    assert_type(content, gemini.ContentDict)
    assert_type(gemini.result_part(result), gemini.PartDict)
    response = client.models.generate_content(
        model="gemini-test",
        contents=[content],
        config={"tools": [*tools]},
    )
    calls = gemini.parse_calls(response)
    assert_type(gemini.parse_calls(response.function_calls), list[ToolCall])
    history: list[genai_types.ContentDict] = [
        {"role": "user", "parts": [{"text": "hi"}]}
    ]
    history.append(gemini.results_message(dispatcher.dispatch_all(calls)))
    client.models.generate_content(
        model="gemini-test",
        contents=history,
        config=genai_types.GenerateContentConfigDict(tools=[*tools]),
    )
    sdk_tool: genai_types.ToolDict = tools[0]
    sdk_part: genai_types.PartDict = gemini.result_part(result)
    del sdk_tool, sdk_part


def _mcp(result: ToolResult) -> None:
    listing = mcp.tools(registry)
    assert_type(listing, list[mcp.ToolDict])
    message = mcp.result_message(result)
    assert_type(message, mcp.CallToolResultDict)
    assert_type(mcp.result_message(result, registry), mcp.CallToolResultDict)
    mcp_types.CallToolResult.model_validate(message)
    mcp_types.ListToolsResult.model_validate({"tools": listing})
