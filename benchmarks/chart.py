"""Draw the ratios of a saved ``dispatch.py`` run as an SVG bar chart.

Run::

    cat /proc/loadavg nproc             # the load before, after, cores
    python benchmarks/dispatch.py > benchmarks/results/dispatch.md
    python benchmarks/chart.py          # -> docs/img/dispatch-ratios.svg

It reads the Markdown table that ``dispatch.py`` printed and draws one
horizontal bar per case: its time as a multiple of its own floor (the row's
baseline), on a log scale that starts at the floor, with the call-pipeline
targets marked. The floors themselves and the raw call are left out (they
are what the bars are measured against). The load average goes into the
chart's caption when ``benchmarks/results/dispatch.load`` holds it, as the
lines ``before 1m 5m 15m`` and ``after 1m 5m 15m`` (the first three fields
of ``/proc/loadavg``) and ``cores N`` (``nproc``).

Only the standard library: the SVG is built as text. The same input gives
the same bytes, so the chart changes in a diff only when the run does.
"""

from __future__ import annotations

import argparse
import math
import re

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape


HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "dispatch.md"
OUTPUT = HERE.parent / "docs" / "img" / "dispatch-ratios.svg"

TARGETS: dict[str, float] = {
    "dispatch": 1.7,
    "adispatch": 1.7,
    "dispatch, 1 interceptor": 2.2,
    "adispatch, 1 interceptor": 2.2,
    "sync tool under adispatch": 12.0,
    "execution_context()": 2.0,
}
"""The call-pipeline issue's targets (#11), by case name."""

LEFT_OUT = frozenset({"raw call"})
"""Rows not drawn besides the baselines: the plain function call."""

ROW = re.compile(
    r"^\|\s*(?P<case>[^|]+?)\s*\|\s*(?P<ns>[\d,.]+)\s*\|"
    r"\s*(?P<base>[^|]+?)\s*\|\s*(?P<ratio>[\d.]+)x\s*\|$"
)

WIDTH = 860
LABELS = 230  # the case names' column
PLOT = 440  # the bars' column
ROW_HEIGHT = 34
TOP = 92  # title and caption above the first row
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, sans-serif"
INK = "#1f2933"
GREY = "#616e7c"
MET, MISSED, NO_TARGET = "#2e7d32", "#c62828", "#5c6bc0"


@dataclass(frozen=True)
class Row:
    """One case of the table: its name, baseline and ratio to it."""

    case: str
    baseline: str
    ratio: float


def parse(text: str) -> tuple[str, list[Row]]:
    """The run's header line and the table's rows, as printed.

    Raises:
        SystemExit: The text holds no table, or a target case is missing
            from it (a renamed case would silently lose its target).
    """
    header = next(
        (line.strip() for line in text.splitlines() if line.strip()), ""
    )
    rows = [
        Row(m["case"], m["base"], float(m["ratio"]))
        for line in text.splitlines()
        if (m := ROW.match(line.strip()))
    ]
    if not rows:
        msg = (
            "No result table found: save the output of "
            "`python benchmarks/dispatch.py` and pass that file."
        )
        raise SystemExit(msg)
    missing = sorted(set(TARGETS) - {row.case for row in rows})
    if missing:
        msg = (
            f"The run has no row for the target case(s) {missing}: update "
            "TARGETS in benchmarks/chart.py to the names dispatch.py prints."
        )
        raise SystemExit(msg)
    return header, rows


def read_load(path: Path) -> str | None:
    """The caption's load sentence from *path*, or None if it is absent."""
    if not path.is_file():
        return None
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            when, *figures = line.split()
            found[when] = figures
    parts = [
        f"{found[when][0]} {when} the run"
        for when in ("before", "after")
        if found.get(when)
    ]
    if not parts:
        return None
    cores = found.get("cores")
    on = f" on {cores[0]} shared cores" if cores else ""
    return "load average " + ", ".join(parts) + f" (1 min){on}"


def ticks(low: float, high: float) -> list[float]:
    """The 1-2-5 values between *low* and *high*, both included."""
    values = []
    for exponent in range(
        math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1
    ):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0**exponent
            if low <= value <= high:
                values.append(value)
    return values


def figure(value: float) -> str:
    """*value* as a short multiple: 2x, 1.7x, 0.5x."""
    return f"{value:g}x"


def el(name: str, text: str | None = None, **attributes: object) -> str:
    """One SVG element; ``text_anchor=`` is written ``text-anchor=``."""
    attrs = "".join(
        f' {key.replace("_", "-")}="{_number(value)}"'
        for key, value in attributes.items()
    )
    if text is None:
        return f"<{name}{attrs}/>"
    return f"<{name}{attrs}>{escape(text)}</{name}>"


def _number(value: object) -> str:
    """An attribute value; floats with one decimal, for stable output."""
    if isinstance(value, float):
        return f"{value:.1f}"
    return escape(str(value), {'"': "&quot;"})


def render(header: str, rows: list[Row], load: str | None) -> str:
    """The SVG chart of *rows*: one bar per case, targets marked."""
    drawn = [
        r for r in rows if r.case != r.baseline and r.case not in LEFT_OUT
    ]
    values = [r.ratio for r in drawn] + list(TARGETS.values())
    low = min(1.0, *values) / 1.25
    high = min(v for v in ticks(1.0, 1000.0) if v >= max(values) * 1.05)
    span = math.log(high) - math.log(low)

    def x(value: float) -> float:
        return LABELS + (math.log(value) - math.log(low)) / span * PLOT

    bottom = TOP + len(drawn) * ROW_HEIGHT
    height = bottom + 78
    described = "; ".join(
        f"{r.case}: {r.ratio:.2f}x {r.baseline}"
        + (f" (target {figure(TARGETS[r.case])})" if r.case in TARGETS else "")
        for r in drawn
    )
    caption = (load or "load average not recorded") + (
        ": read the ratios, not the times."
    )
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
            'aria-labelledby="title desc">'
        ),
        el(
            "title",
            "Each dispatch path as a multiple of its floor",
            id="title",
        ),
        el("desc", described, id="desc"),
        el("rect", width=WIDTH, height=height, rx=12, fill="#ffffff"),
        f'<g font-family="{FONT}" font-size="12.5" fill="{INK}">',
        (
            '<text x="24" y="30" font-size="16" font-weight="bold">'
            "Each dispatch path as a multiple of its floor "
            '<tspan font-weight="normal" font-size="13">'
            "(log scale; shorter is better)</tspan></text>"
        ),
        el("text", header, x=24, y=52, fill=GREY),
        el("text", caption, x=24, y=70, fill=GREY),
    ]
    for value in ticks(low, high):
        floor = value == 1.0
        out += [
            el(
                "line",
                x1=x(value),
                y1=TOP - 6,
                x2=x(value),
                y2=bottom,
                stroke="#52606d" if floor else "#d9dee4",
                stroke_width=1.4 if floor else 1,
            ),
            el(
                "text",
                figure(value),
                x=x(value),
                y=bottom + 17,
                text_anchor="middle",
                fill=GREY,
                font_size=11.5,
            ),
        ]
    out.append(
        el(
            "text",
            "the floor",
            x=x(1.0),
            y=bottom + 33,
            text_anchor="middle",
            fill=GREY,
            font_size=11.5,
        )
    )
    for index, row in enumerate(drawn):
        out += _bar(row, TOP + index * ROW_HEIGHT, x)
    out += [*_legend(bottom + 58), "</g>", "</svg>", ""]
    return "\n".join(out)


def _bar(row: Row, top: int, x: Callable[[float], float]) -> list[str]:
    """The label, bar, target mark and value of one row at *top*."""
    middle = top + ROW_HEIGHT / 2
    end = x(row.ratio)
    target = TARGETS.get(row.case)
    if target is None:
        colour = NO_TARGET
    else:
        colour = MET if row.ratio <= target else MISSED
    left, right = sorted((x(1.0), end))
    lines = [
        el("text", row.case, x=LABELS - 12, y=middle - 1, text_anchor="end"),
        el(
            "text",
            f"vs {row.baseline}",
            x=LABELS - 12,
            y=middle + 12,
            text_anchor="end",
            fill=GREY,
            font_size=10.5,
        ),
        el(
            "rect",
            x=left,
            y=middle - 8,
            width=max(right - left, 1.5),
            height=16,
            rx=2,
            fill=colour,
        ),
    ]
    label_x = end
    text = f"{row.ratio:.2f}x"
    if target is not None:
        mark = x(target)
        label_x = max(end, mark)
        lines.append(
            el(
                "line",
                x1=mark,
                y1=middle - 13,
                x2=mark,
                y2=middle + 13,
                stroke=INK,
                stroke_width=2.2,
            )
        )
        verdict = "met" if row.ratio <= target else "over"
        text += f" (target {figure(target)}: {verdict})"
    lines.append(el("text", text, x=label_x + 8, y=middle + 4.5))
    return lines


def _legend(y: int) -> list[str]:
    """The key to the colours and the target mark."""
    out = []
    x = 24
    for colour, label in [
        (MET, "within its target"),
        (MISSED, "over its target"),
        (NO_TARGET, "no target"),
    ]:
        out += [
            el("rect", x=x, y=y - 10, width=14, height=12, rx=2, fill=colour),
            el("text", label, x=x + 20, y=y, font_size=11.5),
        ]
        x += 150
    out += [
        el(
            "line",
            x1=x + 6,
            y1=y - 13,
            x2=x + 6,
            y2=y + 3,
            stroke=INK,
            stroke_width=2.2,
        ),
        el(
            "text",
            "the target (the call-pipeline issue's goals)",
            x=x + 16,
            y=y,
            font_size=11.5,
        ),
    ]
    return out


def main(argv: list[str] | None = None) -> None:
    """Read the saved run, write the chart."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "results",
        nargs="?",
        type=Path,
        default=RESULTS,
        help="the saved output of dispatch.py (default: %(default)s)",
    )
    parser.add_argument(
        "--load",
        type=Path,
        help="the load averages (default: RESULTS with suffix .load)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=OUTPUT,
        help="where the SVG goes (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    results: Path = args.results
    if not results.is_file():
        msg = (
            f"{results} does not exist: save a run first, "
            "`python benchmarks/dispatch.py > benchmarks/results/dispatch.md`."
        )
        raise SystemExit(msg)
    header, rows = parse(results.read_text(encoding="utf-8"))
    load = read_load(args.load or results.with_suffix(".load"))
    output: Path = args.output
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(header, rows, load), encoding="utf-8")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
