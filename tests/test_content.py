"""Content results: a tool returns text, images, audio or files as parts.

A tool may return one part, or a list or tuple of parts and strings; the
result's output is then the tuple of parts, on every dispatch path, in
sessions, in ``result_to_dict`` and across processes. Parts are checked
when they are made (bytes, a MIME type of the right family), and a part
in the wrong place (inside JSON data, as a stream chunk, mixed with other
values) is an error result that says what to do instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hypothesis import given
from hypothesis import strategies as st

import remote_tools as rt

from doubles import PassThrough
from toolctx import Dispatcher, Registry, Session, ToolCall, ToolResult
from toolctx._context.codec import result_from_dict, result_to_dict
from toolctx.content import (
    Audio,
    File,
    Image,
    Part,
    Text,
    part_from_dict,
    part_to_dict,
    parts_of,
)
from toolctx.exceptions import ContextDataError, ToolOutputError
from toolctx.remote import RemoteOutcome
from toolctx.sessions import session_from_dict, session_to_dict


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
TIMEOUT = 60


def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def chart(title: str) -> list[Text | Image]:
        """Draw a chart under a title."""
        return [title, Image(PNG, "image/png")]

    @registry.tool
    def one_image():  # type: ignore[no-untyped-def]  # says nothing: may be parts
        """Return a single image part."""
        return Image(PNG, "image/png")

    @registry.tool
    def report() -> tuple[Text, File]:
        """Return a text part and a named file part."""
        return (
            Text("see attached"),
            File(b"a,b\n1,2\n", "text/csv", name="t.csv"),
        )

    @registry.tool
    async def speak() -> Audio:
        """Return an audio part from async code."""
        await asyncio.sleep(0)
        return Audio(b"RIFF....WAVE", "audio/wav")

    @registry.tool
    def words() -> list[str]:
        """Strings alone stay JSON."""
        return ["a", "b"]

    @registry.tool
    def mixed():  # type: ignore[no-untyped-def]
        """A part mixed with a number: refused."""
        return [Image(PNG, "image/png"), 3]

    @registry.tool
    def nested() -> dict[str, Any]:
        """A part inside JSON data: refused."""
        return {"picture": Image(PNG, "image/png")}

    @registry.tool
    def frames() -> Iterator[Any]:
        """A part as a stream chunk: refused."""
        yield 1
        yield Image(PNG, "image/png")

    return registry


CHART = (Text("Sales"), Image(PNG, "image/png"))


def _dispatch_all_ways(registry: Registry, call: ToolCall) -> list[ToolResult]:
    """The call's result from every local path, plain and intercepted."""
    results: list[ToolResult] = []
    for interceptors in ((), (PassThrough(),)):
        d = Dispatcher(registry, interceptors=interceptors)
        results.append(d.dispatch(call))
        results.append(asyncio.run(d.adispatch(call)))
        results.append(d.dispatch_all([call])[0])
        results.append(asyncio.run(d.adispatch_all([call]))[0])
        results.append(list(d.stream(call))[-1])  # type: ignore[arg-type]

        async def collect(d: Dispatcher = d) -> Any:
            return [item async for item in d.astream(call)][-1]

        results.append(asyncio.run(collect()))
    return results


class TestToolsReturnParts:
    """What a tool returns as parts is the result's output, on every path."""

    @pytest.mark.parametrize(
        ("call", "expected"),
        [
            (ToolCall("chart", {"title": "Sales"}), CHART),
            (ToolCall("one_image"), (Image(PNG, "image/png"),)),
            (
                ToolCall("report"),
                (
                    Text("see attached"),
                    File(b"a,b\n1,2\n", "text/csv", name="t.csv"),
                ),
            ),
            (ToolCall("speak"), (Audio(b"RIFF....WAVE", "audio/wav"),)),
        ],
    )
    def test_the_output_is_the_tuple_of_parts(
        self, call: ToolCall, expected: tuple[Part, ...]
    ) -> None:
        """Strings become Text; one part becomes a tuple of one."""
        for result in _dispatch_all_ways(_registry(), call):
            assert not result.is_error, result.error
            assert result.output == expected
            assert parts_of(result.output) == expected

    def test_strings_alone_stay_json(self) -> None:
        """A list of strings is JSON output, not content."""
        result = Dispatcher(_registry()).dispatch(ToolCall("words"))
        assert result.output == ["a", "b"]
        assert parts_of(result.output) is None

    def test_a_content_tool_has_no_output_schema(self) -> None:
        """A return type naming parts has no JSON Schema."""
        registry = _registry()
        assert registry["chart"].definition().output_schema is None
        assert registry["words"].definition().output_schema == {
            "type": "array",
            "items": {"type": "string"},
        }

    def test_the_interceptors_and_the_session_see_the_parts(self) -> None:
        """after() and the session get the same tuple of parts."""
        seen: list[Any] = []

        class Spy(PassThrough):
            def after(self, call: Any, context: Any, result: Any) -> Any:
                seen.append(result.output)
                return result

        session = Session("s1")
        d = Dispatcher(_registry(), interceptors=[Spy()])
        d.dispatch(ToolCall("chart", {"title": "Sales"}), session)
        assert seen == [CHART]
        assert session.results[-1].output == CHART

    def test_a_later_call_sees_the_parts_in_prior_results(self) -> None:
        """dispatch_all hands the parts on, unchanged, to later calls."""
        registry = _registry()

        @registry.tool
        def look() -> str:
            """Read the earlier result."""
            from toolctx import execution_context

            prior = execution_context().prior_results[0].output
            return type(prior[1]).__name__

        results = Dispatcher(registry).dispatch_all(
            [ToolCall("chart", {"title": "Sales"}), ToolCall("look")]
        )
        assert results[1].output == "Image"


class TestPartsInTheWrongPlace:
    """A part where JSON belongs is an error result saying what to do."""

    def test_a_part_mixed_with_other_values(self) -> None:
        """The message names the item and the way out."""
        for result in _dispatch_all_ways(_registry(), ToolCall("mixed")):
            assert result.is_error
            assert "item 1 is of type int" in (result.error or "")
            assert "Text(json.dumps(data))" in (result.error or "")
            assert isinstance(result.exception, ToolOutputError)

    def test_a_part_inside_json_data(self) -> None:
        """A part nested in a dict is refused, naming where it is."""
        result = Dispatcher(_registry()).dispatch(ToolCall("nested"))
        assert result.is_error
        assert "A content part (Image) can only be" in (result.error or "")
        assert "picture" in (result.error or "")

    def test_a_part_as_a_stream_chunk(self) -> None:
        """A streaming tool's chunks are JSON data: a part is refused."""
        items = list(Dispatcher(_registry()).stream(ToolCall("frames")))
        result = items[-1]
        assert isinstance(result, ToolResult)
        assert result.is_error
        assert "chunk of a streaming tool" in (result.error or "")


class TestMakingParts:
    """Parts are checked when made: bytes, and a MIME type that fits."""

    def test_data_must_be_bytes(self) -> None:
        """Bytes-like data becomes bytes; text is refused."""
        assert Image(bytearray(b"ab"), "image/png").data == b"ab"
        assert Audio(memoryview(b"ab"), "audio/wav").data == b"ab"
        with pytest.raises(TypeError, match="must be bytes, got str"):
            Image("not bytes", "image/png")  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("cls", "mime", "message"),
        [
            (Image, "audio/wav", "takes a image/\\* MIME type"),
            (Audio, "image/png", "takes a audio/\\* MIME type"),
            (Image, "png", "needs a MIME type"),
            (File, "", "needs a MIME type"),
        ],
    )
    def test_the_mime_type_is_checked(
        self, cls: Any, mime: str, message: str
    ) -> None:
        """A MIME type of another family, or none, is refused."""
        with pytest.raises(ValueError, match=message):
            cls(b"x", mime)

    def test_from_path_reads_the_file_and_guesses_its_type(
        self, tmp_path: Path
    ) -> None:
        """The MIME type comes from the name; a file keeps its name."""
        (tmp_path / "a.png").write_bytes(PNG)
        (tmp_path / "r.pdf").write_bytes(b"%PDF-1.7")
        assert Image.from_path(tmp_path / "a.png") == Image(PNG, "image/png")
        assert File.from_path(str(tmp_path / "r.pdf")) == File(
            b"%PDF-1.7", "application/pdf", name="r.pdf"
        )

    def test_from_path_asks_for_a_type_it_cannot_guess(
        self, tmp_path: Path
    ) -> None:
        """An unknown extension: pass mime_type=."""
        (tmp_path / "blob.zzz").write_bytes(b"x")
        with pytest.raises(ValueError, match="pass mime_type="):
            File.from_path(tmp_path / "blob.zzz")
        part = File.from_path(tmp_path / "blob.zzz", "application/x-zzz")
        assert part.mime_type == "application/x-zzz"

    def test_the_repr_does_not_dump_the_bytes(self) -> None:
        """A large image's repr is short."""
        assert repr(Image(bytes(10_000), "image/png")) == (
            "Image(data=<10000 bytes>, mime_type='image/png')"
        )


_parts = st.one_of(
    st.builds(Text, st.text(max_size=20)),
    st.builds(
        Image,
        st.binary(max_size=30),
        st.sampled_from(["image/png", "image/gif"]),
    ),
    st.builds(Audio, st.binary(max_size=30), st.just("audio/mpeg")),
    st.builds(
        File,
        st.binary(max_size=30),
        st.just("application/pdf"),
        name=st.none() | st.text(min_size=1, max_size=10),
    ),
)


class TestStoredLosslessly:
    """Parts survive every codec unchanged."""

    @given(part=_parts)
    def test_part_to_dict_round_trips(self, part: Part) -> None:
        """part_from_dict(part_to_dict(p)) == p, through JSON-safe data."""
        import json

        data = json.loads(json.dumps(part_to_dict(part)))
        assert part_from_dict(data) == part

    @given(parts=st.lists(_parts, min_size=1, max_size=4))
    def test_a_result_round_trips(self, parts: list[Part]) -> None:
        """result_to_dict stores parts under "content"; they come back."""
        result = ToolResult(name="t", invocation_id="i", output=tuple(parts))
        data = result_to_dict(result)
        assert data["output"] is None
        assert result_from_dict(data).output == tuple(parts)

    def test_a_session_with_a_content_result_round_trips(self) -> None:
        """A stored session gives back the parts of its results."""
        session = Session("s2")
        Dispatcher(_registry()).dispatch(
            ToolCall("chart", {"title": "Sales"}), session
        )
        restored = session_from_dict(session_to_dict(session))
        assert restored.results[-1].output == CHART

    def test_a_remote_outcome_round_trips(self) -> None:
        """RemoteOutcome.to_dict/from_dict keeps the parts."""
        outcome = RemoteOutcome(output=CHART)
        assert RemoteOutcome.from_dict(outcome.to_dict()).output == CHART

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (
                {"type": "video", "data": "", "mime_type": "video/mp4"},
                "'type'",
            ),
            (
                {"type": "image", "data": "***", "mime_type": "image/png"},
                "base64",
            ),
            ({"type": "image", "data": "YQ=="}, "mime_type"),
            ({"type": "text"}, "'text'"),
        ],
    )
    def test_bad_stored_parts_are_refused(
        self, data: dict[str, Any], message: str
    ) -> None:
        """A damaged part names what is wrong."""
        with pytest.raises(ValueError, match=message):
            part_from_dict(data)
        stored = result_to_dict(ToolResult(name="t", output=CHART))
        stored["content"] = [data]
        with pytest.raises(ContextDataError, match="bad part"):
            result_from_dict(stored)


def test_parts_cross_a_process_pool() -> None:
    """A tool run in a spawned worker process returns its parts."""
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        registry = Registry([rt.snapshot])
        d = Dispatcher(registry, executor=pool)
        result = d.dispatch(ToolCall("snapshot", {"caption": "remote"}))
    assert not result.is_error, result.error
    assert result.output == (
        Text("remote"),
        Image(b"\x89PNG\r\n\x1a\n-remote", "image/png"),
    )
