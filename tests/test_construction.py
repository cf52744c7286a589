"""Per-call records built fast are indistinguishable from normal ones.

Every dispatched call builds one ``ExecutionContext`` (with
``derive_call_context``) and one ``ToolResult`` (with ``new_result``)
without running ``__init__``. Both builders behind each function, the
fast one (plain stores into a private subclass, then ``__class__``
assignment) and the slot-descriptor one that free-threaded builds use,
must give objects that no host or tool can tell from ones built by the
class itself: same type, equality, hash, repr, ``attrs.evolve``,
``attrs.asdict``, pickle, copy, size, weak references, and still frozen.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import subprocess
import sys
import sysconfig
import traceback
import weakref

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from hypothesis import given
from hypothesis import strategies as st

from toolctx import (
    ApprovalRequest,
    ExecutionContext,
    ToolCall,
    ToolResult,
    _builders,
)
from toolctx._builders import Builders, builders, record_builder
from toolctx._context.execution import CallRecorder, derive_call_context
from toolctx._frozen import deep_freeze, freeze_mapping
from toolctx._records import frozen_view, new_result


VARIANTS = ("fast", "slots")


def variant(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The *name* builder behind *function*; skip where it does not exist."""
    built = getattr(builders(function), name)
    if built is None:
        pytest.skip(
            "no fast builder here: free-threaded, or the probe refused"
        )
    return built


def _hash(value: object) -> object:
    """The hash of *value*, or the refusal's type for an unhashable one."""
    try:
        return hash(value)
    except TypeError as exc:
        return type(exc)


def assert_indistinguishable(built: Any, expected: Any) -> None:
    """*built* behaves in every observable way as *expected* does."""
    cls = type(expected)
    assert type(built) is cls
    assert built.__class__ is cls
    assert isinstance(built, cls)
    for field in attrs.fields(cls):
        assert getattr(built, field.name) == getattr(expected, field.name)
    assert built == expected
    assert not built != expected  # noqa: SIM202 - __ne__ is its own method
    assert _hash(built) == _hash(expected)
    assert repr(built) == repr(expected)
    assert attrs.asdict(built) == attrs.asdict(expected)
    assert attrs.evolve(built) == attrs.evolve(expected)
    assert type(attrs.evolve(built)) is cls
    # Byte for byte, but without the exception: once tblib is imported (by
    # Dask), pickling an exception changes it, so no two dumps agree.
    assert pickle.dumps(_no_exception(built)) == pickle.dumps(
        _no_exception(expected)
    )
    assert pickle.loads(pickle.dumps(built)) == expected
    assert type(pickle.loads(pickle.dumps(built))) is cls
    assert copy.copy(built) == expected
    assert copy.deepcopy(built) == copy.deepcopy(expected)
    assert type(copy.deepcopy(built)) is cls
    assert sys.getsizeof(built) == sys.getsizeof(expected)
    assert weakref.ref(built)() is built
    assert not hasattr(built, "__dict__")
    for field in attrs.fields(cls):
        before = getattr(built, field.name)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(built, field.name, "changed")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            delattr(built, field.name)
        assert getattr(built, field.name) is before


# -- ExecutionContext ----------------------------------------------------------


class Scope:
    """A runtime-only scope object (compared by identity, never pickled)."""


def full_template() -> ExecutionContext:
    """A template with every field away from its default."""
    earlier = ToolResult(
        name="search", call_id="c0", invocation_id="i0", output="found"
    )
    return ExecutionContext(
        invocation_id="template-id",
        session_id="chat-1",
        turn=3,
        user_id="ada",
        agent_id="planner",
        tool_name="ignored",
        tool_call_id="ignored",
        parent_invocation_id="outer",
        metadata={"channel": "web", "tags": ["a", "b"]},
        state={"count": 2},
        prior_results=(earlier,),
        values={"region": "eu"},
        scope=Scope(),
    )


def expected_context(  # noqa: PLR0917 - mirrors derive_call_context
    template: ExecutionContext,
    invocation_id: str,
    tool_name: str,
    tool_call_id: str | None,
    parent_invocation_id: str | None,
    recorder: CallRecorder,
) -> ExecutionContext:
    """What derive_call_context promises: the template, evolved."""
    return attrs.evolve(
        template,
        invocation_id=invocation_id,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        parent_invocation_id=parent_invocation_id,
        _recorder=recorder,
    )


class TestDeriveCallContext:
    """derive_call_context: the template with the call's own fields."""

    @pytest.mark.parametrize("name", VARIANTS)
    def test_same_as_evolving_the_template(self, name: str) -> None:
        """Both builders give the context attrs.evolve would give."""
        derive = variant(derive_call_context, name)
        template = full_template()
        recorder = CallRecorder()
        args = (template, "inv-1", "delete_file", "call-1", "parent", recorder)
        built = derive(*args)
        assert_indistinguishable(built, expected_context(*args))
        assert built._recorder is recorder
        assert built.scope is template.scope
        assert type(pickle.loads(pickle.dumps(built))) is ExecutionContext

    @pytest.mark.parametrize("name", VARIANTS)
    def test_shares_the_templates_frozen_mappings(self, name: str) -> None:
        """No copy per call: the template's frozen values are reused."""
        derive = variant(derive_call_context, name)
        template = full_template()
        built = derive(template, "i", "t", None, None, CallRecorder())
        assert built.metadata is template.metadata
        assert built.state is template.state
        assert built.prior_results is template.prior_results
        assert built.values is template.values
        with pytest.raises(TypeError, match="read-only"):
            built.metadata["channel"] = "cli"  # type: ignore[index]

    @pytest.mark.parametrize("name", VARIANTS)
    def test_from_a_default_template(self, name: str) -> None:
        """A bare ExecutionContext() template works the same way."""
        derive = variant(derive_call_context, name)
        args = (ExecutionContext(), "i", "t", None, None, CallRecorder())
        assert_indistinguishable(derive(*args), expected_context(*args))

    @pytest.mark.parametrize("name", VARIANTS)
    def test_keeps_the_signature_and_docstring(self, name: str) -> None:
        """Both builders keep the stub's name, parameters and docs."""
        derive = variant(derive_call_context, name)
        assert derive.__name__ == "derive_call_context"
        assert derive.__module__ == "toolctx._context.execution"
        assert tuple(inspect.signature(derive).parameters) == (
            "template",
            "invocation_id",
            "tool_name",
            "tool_call_id",
            "parent_invocation_id",
            "recorder",
        )
        assert derive.__doc__ is not None
        assert derive.__doc__.startswith("Copy *template*")

    @pytest.mark.parametrize("name", VARIANTS)
    def test_traceback_shows_the_generated_line(self, name: str) -> None:
        """A failure inside a builder is shown with its source line."""
        derive = variant(derive_call_context, name)
        with pytest.raises(AttributeError) as info:
            derive(object(), "i", "t", None, None, CallRecorder())
        text = "".join(traceback.format_exception(info.value))
        assert "template.session_id" in text


# -- ToolResult ------------------------------------------------------------------


def result_fields() -> dict[str, Any]:
    """Every ToolResult field away from its default, frozen as callers do."""
    return {
        "name": "delete_file",
        "call_id": "call-1",
        "invocation_id": "inv-1",
        "output": {"deleted": ["/home/ada/x"]},
        "is_error": True,
        "error": "Tool 'delete_file' failed: PermissionError: no",
        "exception": PermissionError("no"),
        "metadata": freeze_mapping({"rows": 3}, "ToolResult.metadata"),
        "state_changes": freeze_mapping(
            {"count": 3}, "ToolResult.state_changes"
        ),
        "duration_ns": 1234,
        "approval": ApprovalRequest(
            call=ToolCall("delete_file", '{"path": "/x"}', "call-1"),
            invocation_id="inv-1",
        ),
    }


class TestNewResult:
    """new_result: a ToolResult from already-frozen parts."""

    @pytest.mark.parametrize("name", VARIANTS)
    def test_same_as_the_constructor(self, name: str) -> None:
        """Both builders give the result ToolResult(...) would give."""
        build = variant(new_result, name)
        fields = result_fields()
        built = build(*fields.values())
        assert_indistinguishable(built, ToolResult(**fields))
        assert built.exception is fields["exception"]
        assert built.content == fields["error"]

    @pytest.mark.parametrize("name", VARIANTS)
    def test_a_hashable_result_hashes_alike(self, name: str) -> None:
        """With a hashable output the hash is the constructor's."""
        build = variant(new_result, name)
        fields = {**result_fields(), "output": ("a", 1)}
        built = build(*fields.values())
        assert hash(built) == hash(ToolResult(**fields))
        assert len({built, ToolResult(**fields)}) == 1

    @pytest.mark.parametrize("name", VARIANTS)
    def test_keeps_the_signature_and_docstring(self, name: str) -> None:
        """Both builders keep the stub's name, parameters and docs."""
        build = variant(new_result, name)
        assert build.__qualname__ == "new_result"
        assert tuple(inspect.signature(build).parameters) == tuple(
            f.name for f in attrs.fields(ToolResult)
        )
        assert build.__doc__ is not None
        assert build.__doc__.startswith("Build a ToolResult")

    def test_frozen_view_is_a_plain_frozen_result(self) -> None:
        """frozen_view gives an ordinary ToolResult with frozen copies."""
        fields = {**result_fields(), "metadata": {"rows": [1]}}
        result = ToolResult(**fields)
        view = frozen_view(result)
        assert_indistinguishable(
            view,
            attrs.evolve(
                result,
                output=deep_freeze(result.output, "A prior result's output"),
                metadata=freeze_mapping(
                    result.metadata, "A prior result's metadata"
                ),
                state_changes=freeze_mapping(
                    result.state_changes, "A prior result's state_changes"
                ),
            ),
        )
        assert view.output == {"deleted": ("/home/ada/x",)}
        assert view.exception is result.exception
        assert view.duration_ns == result.duration_ns
        with pytest.raises(TypeError, match="read-only"):
            view.output["deleted"] = ()
        with pytest.raises(TypeError, match="read-only"):
            view.metadata["rows"] = ()
        assert result.output == {"deleted": ["/home/ada/x"]}


# -- properties ------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
IDS = st.none() | st.text(max_size=8)
MAPPINGS = st.dictionaries(st.text(max_size=5), JSON, max_size=3)


@st.composite
def templates(draw: st.DrawFn) -> ExecutionContext:
    """Any template a host could build."""
    prior = draw(
        st.lists(
            st.builds(
                ToolResult,
                name=st.text(min_size=1, max_size=5),
                output=JSON,
            ),
            max_size=2,
        )
    )
    return ExecutionContext(
        session_id=draw(IDS),
        turn=draw(st.integers(0, 10**6)),
        user_id=draw(IDS),
        agent_id=draw(IDS),
        tool_name=draw(IDS),
        tool_call_id=draw(IDS),
        parent_invocation_id=draw(IDS),
        metadata=draw(MAPPINGS),
        state=draw(MAPPINGS),
        prior_results=tuple(prior),
        values=draw(MAPPINGS),
        scope=draw(st.none() | st.builds(Scope)),
    )


@pytest.mark.parametrize("name", VARIANTS)
@given(
    template=templates(),
    invocation_id=st.text(min_size=1, max_size=8),
    tool_name=st.text(min_size=1, max_size=8),
    tool_call_id=IDS,
    parent_invocation_id=IDS,
)
def test_any_context_is_indistinguishable(  # noqa: PLR0917
    name: str,
    template: ExecutionContext,
    invocation_id: str,
    tool_name: str,
    tool_call_id: str | None,
    parent_invocation_id: str | None,
) -> None:
    """For any template and call fields, a built context is an evolved one."""
    derive = variant(derive_call_context, name)
    args = (
        template,
        invocation_id,
        tool_name,
        tool_call_id,
        parent_invocation_id,
        CallRecorder(),
    )
    assert_indistinguishable(derive(*args), expected_context(*args))


@pytest.mark.parametrize("name", VARIANTS)
@given(
    fields=st.fixed_dictionaries(
        {
            "name": st.text(max_size=8),
            "call_id": IDS,
            "invocation_id": st.text(max_size=8),
            "output": JSON,
            "is_error": st.booleans(),
            "error": IDS,
            "exception": st.none()
            | st.builds(ValueError, st.text(max_size=5)),
            "metadata": MAPPINGS.map(
                lambda m: freeze_mapping(m, "ToolResult.metadata")
            ),
            "state_changes": MAPPINGS.map(
                lambda m: freeze_mapping(m, "ToolResult.state_changes")
            ),
            "duration_ns": st.integers(0, 2**63),
            "approval": st.none()
            | st.builds(
                ApprovalRequest,
                call=st.builds(ToolCall, st.text(max_size=5)),
                invocation_id=st.text(max_size=5),
            ),
        }
    )
)
def test_any_result_is_indistinguishable(
    name: str, fields: dict[str, Any]
) -> None:
    """For any field values, a built result is a constructed one."""
    build = variant(new_result, name)
    args = [fields[field.name] for field in attrs.fields(ToolResult)]
    assert_indistinguishable(build(*args), ToolResult(**fields))


# -- the mechanism -------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Sample:
    """A frozen record standing for a class that gains fields over time."""

    a: int
    b: str = "b"
    c: tuple[int, ...] = attrs.field(default=(), eq=False)


PLAIN = {"__setattr__": object.__setattr__, "__delattr__": object.__delattr__}


class TestRecordBuilder:
    """record_builder: one generated builder per record, chosen at import."""

    def test_the_fast_builder_is_used_where_it_is_safe(self) -> None:
        """On GIL builds dispatch uses the fast builders, else the slots."""
        free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
        assert _builders.PLAIN_STORES is not free_threaded
        for function in (derive_call_context, new_result):
            pair = builders(function)
            assert isinstance(pair, Builders)
            if free_threaded:
                assert pair.fast is None
                assert function is pair.slots
            else:
                assert function is pair.fast
                assert pair.fast is not pair.slots

    def test_a_free_threaded_build_is_detected(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With the GIL disabled, plain stores are ruled out."""
        monkeypatch.setattr(
            sys, "_is_gil_enabled", lambda: False, raising=False
        )
        assert _builders._free_threaded()

    def test_the_package_works_on_the_slot_path(self) -> None:
        """A process that takes the free-threaded path dispatches the same.

        A real interpreter reports its GIL disabled before toolctx is
        imported; both builders then store through slot descriptors, and
        a dispatched call still sees its own context and returns a plain
        ToolResult.
        """
        code = """if True:
            import sys
            sys._is_gil_enabled = lambda: False
            from toolctx import Dispatcher, ExecutionContext, Registry
            from toolctx import ToolCall, ToolResult, execution_context
            from toolctx._context.execution import derive_call_context
            from toolctx._builders import builders
            from toolctx._records import new_result

            assert builders(derive_call_context).fast is None
            assert builders(new_result).fast is None
            registry = Registry()

            @registry.tool
            def who() -> str:
                \"\"\"Who is calling.\"\"\"
                ctx = execution_context()
                return f"{ctx.user_id} {ctx.tool_call_id}"

            result = Dispatcher(registry).dispatch(
                ToolCall("who", "{}", "c1"), ExecutionContext(user_id="ada")
            )
            assert type(result) is ToolResult, type(result)
            print(result.output)
        """
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "ada c1\n"

    def test_unnamed_fields_are_copied_from_the_record(self) -> None:
        """A field the stub does not name is never left unset."""

        @record_builder(Sample, "base", a="value")
        def with_a(base: Sample, value: int) -> Sample:
            """Copy *base* with ``a`` set."""
            raise NotImplementedError

        base = Sample(a=1, b="kept", c=(1, 2))
        for name in VARIANTS:
            built = variant(with_a, name)(base, 5)
            assert_indistinguishable(built, attrs.evolve(base, a=5))
            assert built.c is base.c

    def test_without_plain_stores_the_slot_builder_is_chosen(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Where plain stores are unsafe, the descriptor path is the one."""
        monkeypatch.setattr(_builders, "PLAIN_STORES", False)

        @record_builder(Sample)
        def sample(a: int, b: str, c: tuple[int, ...]) -> Sample:
            """Build a Sample."""
            raise NotImplementedError

        assert builders(sample).fast is None
        assert sample is builders(sample).slots
        assert_indistinguishable(sample(1, "x", ()), Sample(a=1, b="x"))

    def test_a_field_without_a_source_is_refused(self) -> None:
        """A stub that would leave a field unset fails at definition."""
        with pytest.raises(TypeError, match=r"no parameter .* field 'c'"):

            @record_builder(Sample)
            def sample(a: int, b: str) -> Sample:
                """Forgets c."""
                raise NotImplementedError

    def test_an_unused_parameter_is_refused(self) -> None:
        """A parameter that sets no field is a mistake, reported at once."""
        with pytest.raises(TypeError, match=r"unused parameters \['d'\]"):

            @record_builder(Sample)
            def sample(a: int, b: str, c: tuple[int, ...], d: int) -> Sample:
                """Takes one parameter too many."""
                raise NotImplementedError

    def test_a_stub_that_does_not_fit_is_refused(self) -> None:
        """Defaults, unknown sources and reserved names fail at definition."""

        def defaulted(a: int, b: str, c: tuple[int, ...] = ()) -> Sample:
            """Has a default."""
            raise NotImplementedError

        def reserved(_record: int, b: str, c: tuple[int, ...]) -> Sample:
            """Uses a name the generated body needs."""
            raise NotImplementedError

        def plain(a: int, b: str, c: tuple[int, ...]) -> Sample:
            """Fits Sample."""
            raise NotImplementedError

        with pytest.raises(TypeError, match="plain positional parameters"):
            record_builder(Sample)(defaulted)
        with pytest.raises(TypeError, match=r"reserved .*\['_record'\]"):
            record_builder(Sample, a="_record")(reserved)
        with pytest.raises(TypeError, match=r"no field or parameter \['x'\]"):
            record_builder(Sample, x="a")(plain)
        with pytest.raises(TypeError, match=r"no field or parameter \['t'\]"):
            record_builder(Sample, copy_from="t")(plain)

    @pytest.mark.parametrize(
        "namespace",
        [
            pytest.param({**PLAIN, "__slots__": ("extra",)}, id="extra-slot"),
            pytest.param(PLAIN, id="instance-dict"),
            pytest.param({"__slots__": ()}, id="frozen-stores"),
        ],
    )
    def test_a_builder_class_that_does_not_round_trip_is_refused(
        self, namespace: dict[str, Any]
    ) -> None:
        """The import-time probe rejects another layout or frozen stores."""
        builder = type("Builder", (Sample,), dict(namespace))
        assert not _builders._round_trips(Sample, builder)

    def test_the_probe_accepts_the_plain_store_subclass(self) -> None:
        """The subclass record_builder makes does round-trip."""
        if not _builders.PLAIN_STORES:
            pytest.skip("free-threaded: no plain-store subclass")
        builder = _builders._plain_store_class(Sample)
        assert builder is not None
        assert _builders._round_trips(Sample, builder)


def _no_exception(record: Any) -> Any:
    """*record* with its exception (if it has one) left out."""
    if isinstance(record, ToolResult) and record.exception is not None:
        return attrs.evolve(record, exception=None)
    return record
