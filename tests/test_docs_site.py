"""The documentation site: API pages, griffe extension, MkDocs build.

The build tests need the ``docs`` extra (MkDocs Material, mkdocstrings);
without it they skip. The strict build runs once every page in the nav
exists; until then a non-strict build checks that the only warnings are
about the pages still missing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import textwrap

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolctx


ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api"
CONFIG = ROOT / "mkdocs.yml"
IDENTIFIER = re.compile(r"^::: (?P<path>[\w.]+)\s*$", re.MULTILINE)
INCLUDE = re.compile(r"""include-markdown\s+"(?P<path>[^"]+)\"""")
BUILD_TIMEOUT = 600


def documented_paths() -> list[str]:
    """Every ``::: identifier`` of the API reference pages."""
    return [
        match["path"]
        for page in sorted(API.glob("*.md"))
        for match in IDENTIFIER.finditer(page.read_text(encoding="utf-8"))
    ]


class TestApiReference:
    """The API reference pages cover the public API, and only real names."""

    def test_every_public_name_is_documented(self) -> None:
        """Each name in toolctx.__all__ has a ::: entry on an API page."""
        documented = set(documented_paths())
        missing = [
            name
            for name in toolctx.__all__
            if f"toolctx.{name}" not in documented
        ]
        assert missing == [], (
            f"Add `::: toolctx.NAME` lines for {missing} to a page in "
            "docs/api/."
        )

    def test_provider_modules_are_documented(self) -> None:
        """Each module in toolctx.providers.__all__ has its own entry."""
        providers = importlib.import_module("toolctx.providers")
        documented = set(documented_paths())
        missing = [
            name
            for name in providers.__all__
            if f"toolctx.providers.{name}" not in documented
        ]
        assert missing == []

    def test_documented_names_exist(self) -> None:
        """Every ::: entry names an existing module or public attribute."""
        unknown = [path for path in documented_paths() if not _exists(path)]
        assert unknown == []

    def test_no_name_documented_twice(self) -> None:
        """No identifier appears on two API pages (anchors would clash)."""
        paths = documented_paths()
        assert sorted({p for p in paths if paths.count(p) > 1}) == []

    def test_every_page_is_in_the_nav(self) -> None:
        """Every Markdown page under docs/ is listed in mkdocs.yml."""
        config = CONFIG.read_text(encoding="utf-8")
        pages = sorted(
            page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")
        )
        assert [page for page in pages if f" {page}\n" not in config] == []


def _exists(path: str) -> bool:
    """Whether *path* is a module, or a public attribute of one."""
    try:
        if importlib.util.find_spec(path) is not None:
            return True
    except ModuleNotFoundError:  # a name inside a module, not a package
        pass
    module_name, _, attribute = path.rpartition(".")
    module: ModuleType = importlib.import_module(module_name)
    public = getattr(module, "__all__", None)
    if public is not None and attribute not in public:
        return False
    return hasattr(module, attribute)


# -- the griffe extension ----------------------------------------------------


@pytest.fixture(name="ext", scope="module")
def _ext() -> ModuleType:
    """docs/griffe_rest.py, loaded from its file."""
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location(
        "griffe_rest", DOCS / "griffe_rest.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(name="package", scope="module")
def _package() -> Any:
    """The toolctx package as griffe loads it for the API reference."""
    griffe = pytest.importorskip("griffe")
    return griffe.load("toolctx", search_paths=[ROOT / "src"])


class TestGriffeExtension:
    """toolctx's reST docstring habits become Markdown on the site."""

    def test_versionadded(self, ext: ModuleType, package: Any) -> None:
        """A versionadded directive becomes an 'Added in version' line."""
        text = "Summary.\n\n    .. versionadded:: 0.1.0\n"
        assert ext.convert(text, package, set()) == (
            "Summary.\n\n    *Added in version 0.1.0.*\n"
        )

    def test_role_to_documented_name_links(
        self, ext: ModuleType, package: Any
    ) -> None:
        """A role naming a documented object becomes a cross-reference."""
        text = "See :class:`ExecutionContext` and :func:`~toolctx.tool`."
        documented = {"toolctx.ExecutionContext", "toolctx.tool"}
        assert ext.convert(text, package, documented) == (
            "See [`ExecutionContext`][toolctx.ExecutionContext] and "
            "[`tool()`][toolctx.tool]."
        )

    def test_role_to_private_path_links_public_name(
        self, ext: ModuleType, package: Any
    ) -> None:
        """A role naming a private module's object links its public name."""
        text = ":class:`toolctx._records.ToolCall`"
        documented = {"toolctx.ToolCall"}
        assert ext.convert(text, package, documented) == (
            "[`toolctx._records.ToolCall`][toolctx.ToolCall]"
        )

    def test_role_in_private_submodule_links_package_name(
        self, ext: ModuleType, package: Any
    ) -> None:
        """A package's private module's object links the package's name."""
        text = ":class:`toolctx.exceptions._calls.ArgumentError`"
        documented = {"toolctx.exceptions.ArgumentError"}
        assert ext.convert(text, package, documented) == (
            "[`toolctx.exceptions._calls.ArgumentError`]"
            "[toolctx.exceptions.ArgumentError]"
        )

    def test_titled_role(self, ext: ModuleType, package: Any) -> None:
        """A role with an explicit title keeps the title as link text."""
        text = ":meth:`Dispatcher.adispatch <toolctx.Dispatcher.adispatch>`"
        documented = {"toolctx.Dispatcher.adispatch"}
        assert ext.convert(text, package, documented) == (
            "[`Dispatcher.adispatch`][toolctx.Dispatcher.adispatch]"
        )

    def test_role_to_undocumented_name_is_code(
        self, ext: ModuleType, package: Any
    ) -> None:
        """A role whose target is not on the site becomes inline code."""
        text = ":class:`~concurrent.futures.Future` and :mod:`.openai`"
        assert ext.convert(text, package, set()) == ("`Future` and `openai`")

    def test_example_heading(self, ext: ModuleType, package: Any) -> None:
        """An 'Example:' heading becomes 'Examples:' so doctests render."""
        text = "Summary.\n\n    Example:\n        >>> 1\n        1\n"
        converted = ext.convert(text, package, set())
        assert "    Examples:\n        >>> 1" in converted

    def test_simple_table(self, ext: ModuleType, package: Any) -> None:
        """A reST simple table becomes a Markdown table."""
        text = textwrap.dedent("""\
            Intro.

            ======  ==========
            field   from
            ======  ==========
            ``a``   the first
                    and more
            ``b``   the second
            ======  ==========

            After.
        """)
        assert ext.convert(text, package, set()).split("\n") == [
            "Intro.",
            "",
            "",
            "| field | from |",
            "|---|---|",
            "| ``a`` | the first and more |",
            "| ``b`` | the second |",
            "",
            "",
            "After.",
            "",
        ]

    def test_table_cell_overflowing_its_column(
        self, ext: ModuleType, package: Any
    ) -> None:
        """A first cell wider than its rule still stays in its column."""
        text = textwrap.dedent("""\
            =====  =====
            key    value
            =====  =====
            ``too_long``  fits
            =====  =====
        """)
        rows = ext.convert(text, package, set()).split("\n")
        assert "| ``too_long`` | fits |" in rows

    def test_documented_set(self, ext: ModuleType, package: Any) -> None:
        """Public names, their documented members and providers count."""
        documented = ext._documented(package)
        assert "toolctx.ExecutionContext" in documented
        assert "toolctx.Dispatcher.adispatch" in documented
        assert "toolctx.providers.openai.tools" in documented
        assert "toolctx._context.execution.ExecutionContext" not in documented

    def test_docstrings_converted_on_load(self, ext: ModuleType) -> None:
        """Loading toolctx with the extension rewrites its docstrings."""
        griffe = pytest.importorskip("griffe")
        package = griffe.load(
            "toolctx",
            search_paths=[ROOT / "src"],
            extensions=griffe.load_extensions(ext.RestToMarkdown),
        )
        doc = package["execution_context"].docstring.value
        assert ".. versionadded::" not in doc
        assert "*Added in version 0.1.0.*" in doc
        assert "Examples:" in doc


# -- the site ----------------------------------------------------------------


def _nav_pages(items: object) -> Iterator[str]:
    if isinstance(items, str):
        if not items.startswith(("http://", "https://")):
            yield items
    elif isinstance(items, list):
        for item in items:
            yield from _nav_pages(item)
    elif isinstance(items, dict):
        for value in items.values():
            yield from _nav_pages(value)


def _load_config() -> dict[str, Any]:
    from mkdocs.utils.yaml import yaml_load

    with CONFIG.open(encoding="utf-8") as fd:
        config: dict[str, Any] = yaml_load(fd)
    return config


def _missing(config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Nav pages not written yet, and pages whose included file is absent.

    Returns:
        The missing pages (paths under docs/), and the subset of existing
        pages to leave out of the build because they include a file that
        does not exist yet.
    """
    missing: list[str] = []
    blocked: list[str] = []
    for page in _nav_pages(config.get("nav", [])):
        path = DOCS / page
        if not path.exists():
            missing.append(page)
            continue
        for match in INCLUDE.finditer(path.read_text(encoding="utf-8")):
            if not (path.parent / match["path"]).exists():
                missing.append(page)
                blocked.append(page)
    return missing, blocked


def _mkdocs(
    args: list[str], config_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=ROOT,
        env=env,
        input=config_text,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )


def _problems(output: str) -> list[str]:
    return [
        line
        for line in output.splitlines()
        if line.startswith(("WARNING", "ERROR")) or "Aborted" in line
    ]


def _check_site(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in home  # nothing fetched when viewed
    assert (site / "search" / "search_index.json").is_file()
    context = (site / "api" / "context" / "index.html").read_text(
        encoding="utf-8"
    )
    assert 'id="toolctx.ExecutionContext"' in context
    assert "Added in version 0.1.0" in context
    assert "versionadded" not in context


@pytest.fixture(name="config")
def _config() -> dict[str, Any]:
    """mkdocs.yml, parsed; skips without the docs extra."""
    for module in (
        "mkdocs",
        "material",
        "mkdocstrings_handlers.python",
        "mkdocs_include_markdown_plugin",
    ):
        pytest.importorskip(module, reason="needs the docs extra")
    return _load_config()


class TestSiteBuild:
    """mkdocs builds the site offline, in strict mode once it is complete."""

    def test_strict_build(
        self, config: dict[str, Any], tmp_path: Path
    ) -> None:
        """`mkdocs build --strict` succeeds once every nav page exists."""
        missing, _ = _missing(config)
        if missing:
            pytest.skip(f"pages not written yet: {', '.join(missing)}")
        site = tmp_path / "site"
        run = _mkdocs(["build", "--strict", "--site-dir", str(site)])
        assert run.returncode == 0, run.stdout + run.stderr
        assert _problems(run.stdout + run.stderr) == []
        _check_site(site)

    def test_only_missing_pages_warn(
        self, config: dict[str, Any], tmp_path: Path
    ) -> None:
        """While pages are missing, every other page builds without warning."""
        missing, blocked = _missing(config)
        if not missing:
            pytest.skip("every page exists: test_strict_build covers it")
        excluded = "\n".join(
            [config.get("exclude_docs", "").strip()]
            + [f"/{page}" for page in blocked]
        )
        overrides = (
            f"INHERIT: {CONFIG.name}\nstrict: false\n"
            f"exclude_docs: |\n"
            + "".join(f"  {line}\n" for line in excluded.splitlines())
        )
        site = tmp_path / "site"
        run = _mkdocs(
            ["build", "--config-file", "-", "--site-dir", str(site)],
            overrides,
        )
        names = [f"'{Path(page).name}'" for page in missing]
        unexpected = [
            line
            for line in _problems(run.stdout + run.stderr)
            if not any(name in line for name in names)
        ]
        assert unexpected == [], run.stdout + run.stderr
        assert run.returncode == 0, run.stdout + run.stderr
        _check_site(site)
