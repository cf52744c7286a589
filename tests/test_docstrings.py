"""Tests for toolctx._docstrings: Google, NumPy and reST docstrings."""

from __future__ import annotations

import dataclasses

import attrs
import pydantic
import pytest

from typing_extensions import TypedDict

from toolctx import tool
from toolctx._docstrings import ParsedDocstring, parse_docstring


class TestEmpty:
    """Missing or blank docstrings."""

    @pytest.mark.parametrize("doc", [None, "", "   \n\t  \n"])
    def test_missing_docstring_gives_empty_result(self, doc):
        """None, empty and blank docstrings parse to an empty record."""
        assert parse_docstring(doc) == ParsedDocstring("", {}, {})

    def test_summary_only(self):
        """A docstring without sections is all summary, cleaned."""

        def fn():
            """Look up the weather.

            It uses the national service.
            """

        assert parse_docstring(fn.__doc__) == ParsedDocstring(
            "Look up the weather.\n\nIt uses the national service.", {}, {}
        )

    def test_result_is_frozen(self):
        """ParsedDocstring attributes cannot be reassigned."""
        parsed = parse_docstring("Text.")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            parsed.summary = "other"  # type: ignore[misc]


class TestGoogle:
    """Google-style sections."""

    def test_args_with_and_without_types(self):
        """``name (type): text`` and ``name: text`` entries both parse."""

        def fn():
            """Convert a temperature.

            Args:
                value (float): The temperature.
                unit: The target unit.
            """

        parsed = parse_docstring(fn.__doc__)
        assert parsed.summary == "Convert a temperature."
        assert parsed.params == {
            "value": "The temperature.",
            "unit": "The target unit.",
        }

    def test_multi_line_descriptions_are_joined(self):
        """Continuation lines, even after a blank line, join with spaces."""

        def fn():
            """Search.

            Args:
                query: The text to
                    look for, in
                    any language.

                    A second paragraph.
                limit (int, optional): How many
                    results.
            """

        assert parse_docstring(fn.__doc__).params == {
            "query": "The text to look for, in any language. A second "
            "paragraph.",
            "limit": "How many results.",
        }

    @pytest.mark.parametrize(
        "header",
        [
            "Args:",
            "Arguments:",
            "Parameters:",
            "Params:",
            "Keyword Args:",
            "Keyword Arguments:",
            "Other Parameters:",
        ],
    )
    def test_parameter_section_names(self, header):
        """Every Google parameter section title is recognised."""
        doc = f"Summary.\n\n{header}\n    x: The x.\n"
        assert parse_docstring(doc) == ParsedDocstring(
            "Summary.", {"x": "The x."}, {}
        )

    def test_types_with_parentheses_and_colons(self):
        """Nested brackets and colons in the type or text do not confuse."""
        doc = (
            "Summary.\n\n"
            "Args:\n"
            "    pairs (dict[str, tuple(int, int)]): Map: key to pair.\n"
            "    fn (Callable[[int], str]): A (pure) function.\n"
        )
        assert parse_docstring(doc).params == {
            "pairs": "Map: key to pair.",
            "fn": "A (pure) function.",
        }

    def test_star_args_lose_their_stars(self):
        """``*args`` and ``**kwargs`` entries are keyed without stars."""
        doc = "S.\n\nArgs:\n    *args: Extra.\n    **kwargs: Options.\n"
        assert parse_docstring(doc).params == {
            "args": "Extra.",
            "kwargs": "Options.",
        }

    def test_description_on_following_line(self):
        """An entry whose text starts on the next line still gets it."""
        doc = "S.\n\nArgs:\n    x (int):\n        The x value.\n"
        assert parse_docstring(doc).params == {"x": "The x value."}

    @pytest.mark.parametrize(
        "header",
        [
            "Returns:",
            "Return:",
            "Raises:",
            "Yields:",
            "Yield:",
            "Examples:",
            "Example:",
            "Note:",
            "Notes:",
            "Warns:",
            "See Also:",
            "References:",
            "Todo:",
        ],
    )
    def test_outcome_sections_are_dropped(self, header):
        """Returns/Raises/Examples/Note... sections leave the summary."""
        doc = f"Summary.\n\n{header}\n    Something here.\n    More.\n"
        assert parse_docstring(doc) == ParsedDocstring("Summary.", {}, {})

    def test_text_after_sections_stays(self):
        """Unindented text after a section returns to the summary."""

        def fn():
            """Summary.

            Args:
                x: The x.

            Returns:
                The y.

            Trailing paragraph.
            """

        parsed = parse_docstring(fn.__doc__)
        assert parsed.summary == "Summary.\n\nTrailing paragraph."
        assert parsed.params == {"x": "The x."}

    def test_inline_note_is_text(self):
        """``Note: text`` on one line is prose, not a section title."""
        doc = "Summary.\n\nNote: this is slow.\n"
        assert (
            parse_docstring(doc).summary == "Summary.\n\nNote: this is slow."
        )

    def test_unknown_titles_stay(self):
        """A ``Title:`` line that names no known section stays as text."""
        doc = "Summary.\n\nFor example:\n    do_it()\n"
        assert parse_docstring(doc).summary == (
            "Summary.\n\nFor example:\n    do_it()"
        )

    def test_full_google_docstring(self):
        """A realistic docstring splits into summary and parameters."""

        def fn():
            """Book a meeting room.

            The room is held for fifteen minutes.

            Args:
                room: The room's name, as shown
                    on the door.
                start (datetime): When the meeting starts.

            Returns:
                The booking id.

            Raises:
                ValueError: The room is taken.

            Example:
                >>> book("Blue", now())
            """

        assert parse_docstring(fn.__doc__) == ParsedDocstring(
            "Book a meeting room.\n\nThe room is held for fifteen minutes.",
            {
                "room": "The room's name, as shown on the door.",
                "start": "When the meeting starts.",
            },
            {},
        )

    def test_attributes_section(self):
        """A Google ``Attributes:`` section fills ``attributes``."""

        class Point:
            """A point.

            Attributes:
                x: Horizontal
                    position.
                y (float): Vertical position.
            """

        parsed = parse_docstring(Point.__doc__)
        assert parsed == ParsedDocstring(
            "A point.",
            {},
            {"x": "Horizontal position.", "y": "Vertical position."},
        )


class TestNumpy:
    """NumPy-style sections."""

    def test_parameters_section(self):
        """``name : type`` entries with indented text parse."""
        doc = """Scale a vector.

            Parameters
            ----------
            vector : list of float
                The values to
                scale.
            factor : float, optional
                The multiplier.
            verbose
                Print progress.

            Returns
            -------
            list of float
                The scaled values.
            """

        assert parse_docstring(doc) == ParsedDocstring(
            "Scale a vector.",
            {
                "vector": "The values to scale.",
                "factor": "The multiplier.",
                "verbose": "Print progress.",
            },
            {},
        )

    def test_combined_names_share_text(self):
        """``x, y : int`` gives both names the same description."""
        doc = "S.\n\nParameters\n----------\nx, y : int\n    A coordinate.\n"
        assert parse_docstring(doc).params == {
            "x": "A coordinate.",
            "y": "A coordinate.",
        }

    def test_blank_lines_inside_descriptions(self):
        """Paragraphs of one entry are joined with single spaces."""
        doc = (
            "S.\n\nParameters\n----------\nx : int\n    First.\n\n"
            "    Second.\ny : str\n    Why.\n"
        )
        assert parse_docstring(doc).params == {
            "x": "First. Second.",
            "y": "Why.",
        }

    @pytest.mark.parametrize(
        "title",
        [
            "Returns",
            "Yields",
            "Receives",
            "Raises",
            "Warns",
            "See Also",
            "Notes",
            "References",
            "Examples",
        ],
    )
    def test_outcome_sections_are_dropped(self, title):
        """NumPy outcome sections leave the summary."""
        rule = "-" * len(title)
        doc = f"Summary.\n\n{title}\n{rule}\nint\n    Stuff.\n"
        assert parse_docstring(doc) == ParsedDocstring("Summary.", {}, {})

    def test_other_parameters_and_attributes(self):
        """``Other Parameters`` join params; ``Attributes`` fill attributes."""
        doc = (
            "S.\n\n"
            "Other Parameters\n----------------\nz : int\n    Zed.\n\n"
            "Attributes\n----------\nname : str\n    The name.\n"
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "S.", {"z": "Zed."}, {"name": "The name."}
        )

    def test_unknown_underlined_title_stays(self):
        """An underlined title that is no NumPy section stays as text."""
        doc = "S.\n\nDetails\n-------\nSome details.\n"
        assert parse_docstring(doc).summary == (
            "S.\n\nDetails\n-------\nSome details."
        )


class TestRest:
    """reST/Sphinx field lists."""

    def test_param_fields(self):
        """``:param name:`` and ``:param type name:`` both parse."""

        def fn():
            """Send a message.

            :param channel: Where to post.
            :param int retries: How often
                to retry.
            :type channel: str
            :returns: The message id.
            :rtype: str
            :raises ValueError: The channel is unknown.
            """

        assert parse_docstring(fn.__doc__) == ParsedDocstring(
            "Send a message.",
            {"channel": "Where to post.", "retries": "How often to retry."},
            {},
        )

    @pytest.mark.parametrize(
        "kind", ["param", "parameter", "arg", "argument", "key", "keyword"]
    )
    def test_param_field_names(self, kind):
        """Every Sphinx spelling of a parameter field is recognised."""
        doc = f"S.\n\n:{kind} x: The x.\n"
        assert parse_docstring(doc) == ParsedDocstring("S.", {"x": "The x."})

    @pytest.mark.parametrize(
        "line",
        [
            ":returns: A value.",
            ":return: A value.",
            ":rtype: int",
            ":raises KeyError: Missing.",
            ":raise KeyError: Missing.",
            ":except KeyError: Missing.",
            ":exception KeyError: Missing.",
            ":yields: Values.",
            ":yield: Values.",
            ":ytype: int",
            ":type x: int",
            ":vartype x: int",
            ":meta private:",
        ],
    )
    def test_outcome_fields_are_dropped(self, line):
        """Return, raise, yield and type fields leave the summary."""
        assert parse_docstring(f"S.\n\n{line}\n") == ParsedDocstring("S.")

    def test_roles_at_line_start_are_text(self):
        """A line starting with a role such as ``:class:`` is prose."""
        doc = "S.\n\n:class:`Foo` does the work.\n"
        assert parse_docstring(doc).summary == (
            "S.\n\n:class:`Foo` does the work."
        )

    def test_ivar_fields_fill_attributes(self):
        """``:ivar:``, ``:var:`` and ``:cvar:`` describe attributes."""
        doc = "S.\n\n:ivar a: Ay.\n:var b: Bee.\n:cvar c: See.\n"
        assert parse_docstring(doc) == ParsedDocstring(
            "S.", {}, {"a": "Ay.", "b": "Bee.", "c": "See."}
        )


class TestMixed:
    """Precedence and layout rules across styles."""

    def test_first_description_wins(self):
        """A parameter described twice keeps its first description."""
        doc = "S.\n\nArgs:\n    x: First.\n\n:param x: Second.\n"
        assert parse_docstring(doc).params == {"x": "First."}

    def test_first_line_on_quote_line(self):
        """A summary starting on the quote line is dedented correctly."""
        doc = """Summary on the first line.

        Details indented in source.

        Args:
            x: The x.
        """
        assert parse_docstring(doc) == ParsedDocstring(
            "Summary on the first line.\n\nDetails indented in source.",
            {"x": "The x."},
            {},
        )

    def test_dropped_sections_leave_no_blank_runs(self):
        """Removing sections between paragraphs leaves one blank line."""
        doc = "A.\n\nReturns:\n    B.\n\n\n\nC.\n"
        assert parse_docstring(doc).summary == "A.\n\nC."

    def test_directives_stay_in_summary(self):
        """Directives such as ``.. versionadded::`` are kept as text."""
        doc = "S.\n\n.. versionadded:: 0.1.0\n"
        assert parse_docstring(doc).summary == "S.\n\n.. versionadded:: 0.1.0"


class TestTitleOnQuoteLine:
    """Docstrings that start straight with a section, no summary line.

    The docstrings are written out as the interpreter stores them (the
    formatter would reflow real ones): the title on the quote line, the
    body indented as in a method, the closing quotes on their own line.
    """

    def test_google_args_first(self):
        """A first-line ``Args:`` keeps every entry, blank lines included.

        ``inspect.getdoc`` dedents the entries to the title's column, which
        used to pull them out of the section into the description.
        """
        doc = (
            "Args:\n"
            "            a: The a,\n"
            "                continued.\n"
            "\n"
            "            b: The b.\n"
            "        "
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "", {"a": "The a, continued.", "b": "The b."}, {}
        )

    def test_google_args_first_closing_on_text_line(self):
        """Without a closing-quote line, the entries still belong to it."""
        doc = "Args:\n            a: The a.\n            b: The b."
        assert parse_docstring(doc) == ParsedDocstring(
            "", {"a": "The a.", "b": "The b."}, {}
        )

    def test_google_args_first_then_more_sections(self):
        """Later sections at the docstring's indentation end the first."""
        doc = (
            "Args:\n"
            "            a: The a.\n"
            "\n"
            "        Returns:\n"
            "            The sum.\n"
            "\n"
            "        Details after the sections.\n"
            "        "
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "Details after the sections.", {"a": "The a."}, {}
        )

    def test_numpy_parameters_first(self):
        """A NumPy ``Parameters`` title on the quote line parses."""
        doc = (
            "Parameters\n"
            "        ----------\n"
            "        a : int\n"
            "            The a.\n"
            "        b : str\n"
            "            The b.\n"
            "        "
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "", {"a": "The a.", "b": "The b."}, {}
        )

    def test_rest_field_first(self):
        """A reST field on the quote line keeps its continuation line."""
        doc = (
            ":param a: The a,\n"
            "            continued.\n"
            "        :param b: The b.\n"
            "        "
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "", {"a": "The a, continued.", "b": "The b."}, {}
        )

    def test_rest_single_field_first(self):
        """A lone field whose text continues is not cut at the margin."""
        doc = ":param a: The a,\n            continued.\n        "
        assert parse_docstring(doc).params == {"a": "The a, continued."}

    def test_tool_schema_gets_the_descriptions(self):
        """``@tool`` reads the docstring as written: the model sees them."""

        def add(a: int, b: int) -> int:
            return a + b

        add.__doc__ = (
            "Args:\n"
            "            a: The first number.\n"
            "\n"
            "            b: The second number.\n"
            "        "
        )
        definition = tool(add).definition()
        properties = definition.parameters["properties"]
        assert properties["a"]["description"] == "The first number."
        assert properties["b"]["description"] == "The second number."
        assert definition.description == ""


class TestUnindentedBodies:
    """Section bodies written at the title's own indentation."""

    def test_google_sections_do_not_leak(self):
        """Unindented ``Args:``/``Returns:`` bodies stay out of the summary.

        The body runs to a blank line followed by unindented text, or to
        the next section; indented continuation lines belong to it.
        """

        def fn(a, b):
            """Add numbers.

            Args:
            a: The first.
            b: The second,
                and last.

            Returns:
            The sum.

            Trailing paragraph.
            """

        assert parse_docstring(fn.__doc__) == ParsedDocstring(
            "Add numbers.\n\nTrailing paragraph.",
            {"a": "The first.", "b": "The second, and last."},
            {},
        )

    def test_blank_line_then_indented_text_continues(self):
        """An indented paragraph after a blank line is still the entry's."""
        doc = "S.\n\nArgs:\na: One.\n\n    More on a.\nb: Two.\n\nAfter.\n"
        assert parse_docstring(doc) == ParsedDocstring(
            "S.\n\nAfter.", {"a": "One. More on a.", "b": "Two."}, {}
        )

    def test_next_section_ends_an_unindented_body(self):
        """A title right after an unindented body starts the next section."""
        doc = "S.\nArgs:\na: One.\nRaises:\nValueError: Bad.\nReturns:\nX.\n"
        assert parse_docstring(doc) == ParsedDocstring("S.", {"a": "One."}, {})

    def test_google_attributes_unindented(self):
        """An unindented ``Attributes:`` body fills ``attributes``."""
        doc = "A point.\n\nAttributes:\nx: Across.\ny: Up.\n"
        assert parse_docstring(doc) == ParsedDocstring(
            "A point.", {}, {"x": "Across.", "y": "Up."}
        )

    def test_rest_unindented_continuation(self):
        """A reST field's unindented next line continues its text."""
        doc = (
            "S.\n\n:param a: The a,\ncontinued.\n:param b: The b.\n\nAfter.\n"
        )
        assert parse_docstring(doc) == ParsedDocstring(
            "S.\n\nAfter.", {"a": "The a, continued.", "b": "The b."}, {}
        )

    def test_summary_keeps_an_indented_block(self):
        """The description is dedented once: an indented block stays so."""

        def fn(expr):
            """Evaluate an expression.

                1 + 2 * 3

            Args:
                expr: The expression.
            """

        assert parse_docstring(fn.__doc__).summary == (
            "Evaluate an expression.\n\n    1 + 2 * 3"
        )


# -- field texts of classes ----------------------------------------------------


@dataclasses.dataclass
class ArgsDataclass:
    """A room booking.

    Args:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int = 1


@dataclasses.dataclass
class AttributesDataclass:
    """A room booking.

    Attributes:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int = 1


@attrs.define
class ArgsAttrs:
    """A room booking (a private field, documented by its alias).

    Args:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    _seats: int = 1


@attrs.define
class AttributesAttrs:
    """A room booking.

    Attributes:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int = 1


class ArgsTypedDict(TypedDict):
    """A room booking.

    Args:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int


class AttributesTypedDict(TypedDict):
    """A room booking.

    Attributes:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int


class ArgsModel(pydantic.BaseModel):
    """A room booking.

    Args:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int = 1


class AttributesModel(pydantic.BaseModel):
    """A room booking.

    Attributes:
        room: The room's name.
        seats: How many seats.
    """

    room: str
    seats: int = 1


@dataclasses.dataclass
class BothSections:
    """A room booking.

    Args:
        room: Overridden.
        seats: How many seats.

    Attributes:
        room: The room's name.
    """

    room: str
    seats: int = 1


@pytest.mark.parametrize(
    "cls",
    [
        ArgsDataclass,
        AttributesDataclass,
        ArgsAttrs,
        AttributesAttrs,
        ArgsTypedDict,
        AttributesTypedDict,
        ArgsModel,
        AttributesModel,
        BothSections,
    ],
)
def test_class_sections_describe_fields(cls: type) -> None:
    """``Args:`` and ``Attributes:`` of a class describe its fields.

    CONTRACT §7: dataclasses, attrs classes, TypedDicts and pydantic
    models; where both sections name a field, ``Attributes:`` wins.
    """

    def book(booking: str) -> None:
        """Book a room."""

    book.__annotations__ = {"booking": cls, "return": None}
    schema = tool(book).definition().parameters
    definition = schema["$defs"][cls.__name__]
    properties = definition["properties"]
    assert properties["room"]["description"] == "The room's name."
    assert properties["seats"]["description"] == "How many seats."
    assert definition["description"].startswith("A room booking")
