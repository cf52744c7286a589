"""benchmarks/chart.py draws a saved dispatch.py run as an SVG bar chart.

The chart on the Performance page must show what the run measured: one
bar per case against its floor, and stop with a clear message when the
table is not a dispatch.py table.
"""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET

from pathlib import Path
from types import ModuleType

import pytest


ROOT = Path(__file__).resolve().parent.parent


def _chart() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "chart", ROOT / "benchmarks" / "chart.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["chart"] = module  # its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


def test_the_saved_run_renders_as_svg_with_every_case() -> None:
    """Every case of the saved run appears in a well-formed SVG."""
    chart = _chart()
    text = (ROOT / "benchmarks" / "results" / "dispatch.md").read_text()
    header, rows = chart.parse(text)
    svg = chart.render(header, rows, "load 1.0")
    root = ET.fromstring(svg)  # noqa: S314 - our own output
    assert root.tag.endswith("svg")
    for case in ("dispatch", "adispatch", "sync tool under adispatch"):
        assert case in svg
    assert len(rows) >= 8


def test_a_table_without_the_target_cases_is_refused() -> None:
    """A table that is not dispatch.py's stops with a message."""
    chart = _chart()
    table = (
        "| case | ns/call | baseline | ratio |\n"
        "|---|---:|---|---:|\n"
        "| floor | 100 | floor | 1.00x |\n"
    )
    with pytest.raises(SystemExit):
        chart.parse(table)
