"""The ``toolctx`` command line: list, call, serve, and its error messages."""

from __future__ import annotations

import io
import json
import signal
import socket
import subprocess
import sys

from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests import mcp_app

from toolctx import exceptions as _errors
from toolctx.cli import main
from toolctx.providers._render import plain


ROOT = Path(__file__).resolve().parent.parent
APP = "tests.mcp_app:registry"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run main() in process; return (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(name="project")
def _project(tmp_path, monkeypatch) -> Iterator[Path]:
    """A project folder as the working directory, with sys.path restored after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        sys, "path", [p for p in sys.path if p not in {"", str(tmp_path)}]
    )
    names = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - names:
        del sys.modules[name]


class TestList:
    """toolctx list: the tool list in our format or a provider's."""

    def test_json_is_our_definitions(self, capsys):
        """The default format prints the registry's ToolDefinition dicts in order."""
        code, out, _ = run_cli(capsys, "list", APP)

        assert code == 0
        assert json.loads(out) == [
            plain(d.to_dict()) for d in mcp_app.registry.definitions()
        ]

    def test_names(self, capsys):
        """--format names prints one name per line, in order."""
        code, out, _ = run_cli(capsys, "list", APP, "--format", "names")

        assert code == 0
        assert out.splitlines() == list(mcp_app.registry)

    @pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini", "mcp"])
    def test_provider_formats(self, capsys, fmt):
        """A provider format prints that provider's tools() list."""
        module = __import__(f"toolctx.providers.{fmt}", fromlist=["tools"])

        code, out, _ = run_cli(capsys, "list", APP, "--format", fmt)

        assert code == 0
        assert json.loads(out) == json.loads(
            json.dumps(module.tools(mcp_app.registry))
        )

    def test_dispatcher_target(self, capsys):
        """A Dispatcher target lists its registry's tools."""
        code, out, _ = run_cli(
            capsys, "list", "tests.mcp_app:denying", "--format", "names"
        )

        assert code == 0
        assert out.splitlines() == list(mcp_app.registry)

    def test_unrenderable_schema_is_exit_1(self, capsys, monkeypatch):
        """A tool list the provider cannot express is reported on stderr with exit code 1."""
        from toolctx.providers import gemini

        def refuse(registry):
            raise _errors.ProviderSchemaError(
                "no recursion here",
                provider="gemini",
                tool="convert",
                path="/x",
            )

        monkeypatch.setattr(gemini, "tools", refuse)

        code, out, err = run_cli(capsys, "list", APP, "--format", "gemini")

        assert code == 1
        assert out == ""
        assert "cannot list the tools for gemini: no recursion here" in err

    def test_imports_from_the_working_directory(self, capsys, project):
        """MODULE is importable from the current directory, as with python -m."""
        (project / "cli_cwd_app.py").write_text(
            "from toolctx import Registry\n"
            "registry = Registry()\n"
            "@registry.tool\n"
            "def ping() -> str:\n"
            "    '''Answer pong.'''\n"
            "    return 'pong'\n"
        )

        code, out, err = run_cli(
            capsys, "list", "cli_cwd_app:registry", "--format", "names"
        )

        assert (code, out, err) == (0, "ping\n", "")

    def test_dotted_attribute(self, capsys, project):
        """The attribute part may be a dotted path."""
        (project / "cli_dotted_app.py").write_text(
            "import types\n"
            "from toolctx import Registry\n"
            "tools = types.SimpleNamespace(registry=Registry())\n"
        )

        code, out, _ = run_cli(capsys, "list", "cli_dotted_app:tools.registry")

        assert (code, json.loads(out)) == (0, [])


class TestCall:
    """toolctx call: one dispatched call, printed as JSON."""

    def test_prints_the_result(self, capsys):
        """A successful call prints the result's JSON fields and exits 0."""
        code, out, _ = run_cli(capsys, "call", APP, "add", '{"a": 2, "b": 40}')
        data = json.loads(out)

        assert code == 0
        assert set(data) == {
            "name",
            "call_id",
            "invocation_id",
            "output",
            "is_error",
            "error",
            "duration_ns",
        }
        assert (data["name"], data["output"], data["is_error"]) == (
            "add",
            42,
            False,
        )
        assert data["error"] is None
        assert len(data["invocation_id"]) == 32
        assert isinstance(data["duration_ns"], int)

    def test_error_result_exits_1(self, capsys):
        """An error result is printed too, and the exit code is 1."""
        code, out, _ = run_cli(capsys, "call", APP, "add", '{"a": 2}')
        data = json.loads(out)

        assert code == 1
        assert data["is_error"] is True
        assert "'add'" in data["error"]
        assert "b" in data["error"].split(":", 1)[1]

    def test_context_options(self, capsys):
        """--user, --session, --turn, --agent, --meta and --call-id fill the context."""
        code, out, _ = run_cli(
            capsys,
            "call",
            APP,
            "whoami",
            "--user",
            "ada",
            "--session",
            "chat-7",
            "--turn",
            "3",
            "--agent",
            "planner",
            "--meta",
            "channel=web",
            "--meta",
            "expr=a=b",
            "--call-id",
            "call-9",
        )
        data = json.loads(out)
        seen = data["output"]

        assert code == 0
        assert data["call_id"] == "call-9"
        assert (seen["user_id"], seen["session_id"], seen["turn"]) == (
            "ada",
            "chat-7",
            3,
        )
        assert seen["agent_id"] == "planner"
        assert seen["tool_call_id"] == "call-9"
        assert seen["metadata"] == {"channel": "web", "expr": "a=b"}

    def test_metadata_only_when_asked(self, capsys):
        """Host-only metadata is printed only with --show-metadata."""
        _, plain_out, _ = run_cli(capsys, "call", APP, "leaky")
        code, shown, _ = run_cli(
            capsys, "call", APP, "leaky", "--show-metadata"
        )

        assert "hunter2" not in plain_out
        assert "metadata" not in json.loads(plain_out)
        assert code == 0
        assert json.loads(shown)["metadata"] == {"secret": "hunter2"}
        assert json.loads(shown)["state_changes"] == {}

    def test_arguments_default_to_empty(self, capsys):
        """Without arguments the call gets {}."""
        code, out, _ = run_cli(capsys, "call", APP, "whoami")

        assert code == 0
        assert json.loads(out)["output"]["tool_name"] == "whoami"

    def test_arguments_from_stdin(self, capsys, monkeypatch):
        """- reads the arguments from standard input."""
        monkeypatch.setattr(sys, "stdin", io.StringIO('{"a": 1, "b": 2}'))

        code, out, _ = run_cli(capsys, "call", APP, "add", "-")

        assert (code, json.loads(out)["output"]) == (0, 3)

    def test_async_tool(self, capsys):
        """An async tool runs to completion."""
        code, out, _ = run_cli(
            capsys, "call", APP, "greet", '{"name": "ada"}', "--session", "s1"
        )

        assert (code, json.loads(out)["output"]) == (0, "hello ada from s1")

    def test_a_tool_that_exits_is_an_error_result(self, capsys):
        """A tool raising SystemExit (argparse on bad input) is an error result: printed, exit code 1."""
        code, out, _ = run_cli(
            capsys,
            "call",
            APP,
            "parse_flags",
            '{"flags": ["--count", "many"]}',
        )
        data = json.loads(out)

        assert code == 1
        assert data["is_error"] is True
        assert data["error"] == "Tool 'parse_flags' failed: SystemExit: 2"

    @pytest.mark.parametrize(
        ("tool", "arguments", "raised"),
        [
            ("add", '{"a": 1, "b": 2}', "RuntimeError: cannot connect"),
            ("greet", '{"name": "ada"}', "SystemExit: giving up"),
        ],
    )
    def test_a_raising_dispatcher_is_one_line_and_exit_1(
        self, capsys, tool, arguments, raised
    ):
        """When the host's code around the tool raises (an interceptor), even SystemExit, the CLI reports it on one line and exits 1."""
        code, out, err = run_cli(
            capsys, "call", "tests.mcp_app:broken", tool, arguments
        )

        assert code == 1
        assert out == ""
        assert err.startswith(
            f"toolctx: error: calling tool {tool!r} failed: {raised}"
        )
        assert "mcp_app.py:" in err
        assert err.count("\n") == 1

    def test_dispatcher_interceptors_run(self, capsys):
        """A Dispatcher target's interceptors run on the call."""
        code, out, _ = run_cli(
            capsys, "call", "tests.mcp_app:denying", "add", '{"a": 1, "b": 2}'
        )

        assert code == 1
        assert "nothing is allowed here" in json.loads(out)["error"]


class TestErrors:
    """Usage errors: exit code 2 and one clear line on stderr."""

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (
                ["list", "tests.mcp_app"],
                "'tests.mcp_app' is not a MODULE:ATTRIBUTE or FILE.py:ATTRIBUTE target (no colon: add one and the variable holding the registry), e.g. tests.mcp_app:broken; registries and dispatchers there: broken, denying",
            ),
            (
                ["list", ":registry"],
                "(name the module or file before the colon), e.g. app:registry or path/to/app.py:registry",
            ),
            (
                ["list", "tests.mcp_app:1st"],
                "(the attribute '1st' is not a Python name)",
            ),
            (
                ["list", "no_such_module_xyz:registry"],
                "cannot import module 'no_such_module_xyz'",
            ),
            (
                ["list", "tests.mcp_app:nope"],
                "module 'tests.mcp_app' has no attribute 'nope'; registries and dispatchers there: broken, denying",
            ),
            (
                ["list", "tests.mcp_app:not_a_registry"],
                "tests.mcp_app:not_a_registry is a dict, not a toolctx Registry or Dispatcher (or a factory returning one)",
            ),
            (["call", APP, "add", "{bad"], "the arguments are not valid JSON"),
            (
                ["call", APP, "add", "[1, 2]"],
                "the arguments must be a JSON object",
            ),
            (
                ["call", APP, "add", "--meta", "novalue"],
                "argument --meta: expected KEY=VALUE, got 'novalue'",
            ),
            (
                ["call", APP, "add", "--turn", "x"],
                "argument --turn: expected an integer, got 'x'",
            ),
            (
                ["call", APP, "add", "--turn", "-1"],
                "argument --turn: expected a non-negative integer",
            ),
            (["list", APP, "--format", "xml"], "invalid choice: 'xml'"),
            (["serve", APP, "--port", "99999"], "expected a port number"),
            (
                ["serve", APP, "--port", "9000"],
                "argument --port: an HTTP option, and the transport is stdio; add --transport http",
            ),
            (
                ["serve", APP, "--stateless"],
                "argument --stateless: an HTTP option",
            ),
            (
                ["serve", APP, "--json-response"],
                "argument --json-response: an HTTP option",
            ),
            (
                ["list", APP, "--app-dir", "no/such/dir"],
                "argument --app-dir: 'no/such/dir' is not a directory (looked for ",
            ),
            ([], "the following arguments are required"),
            (
                ["call", APP, "add", '{"a": 1, "b": 2, "b" :5000}'],
                (
                    "the arguments are not valid JSON (duplicate key 'b'; "
                    "send each key once)"
                ),
            ),
            (
                ["call", APP, "add", '{"a": NaN, "b": 2}'],
                "the arguments are not valid JSON (NaN is not valid JSON",
            ),
            (
                ["call", APP, "add", '{"a": 1e999, "b": 2}'],
                (
                    "the arguments are not valid JSON (the number 1e999 is "
                    "too large"
                ),
            ),
            (
                ["call", APP, "whoami", "--meta", "k=1", "--meta", "k=2"],
                "argument --meta: the key 'k' is given twice",
            ),
        ],
    )
    def test_usage_errors(self, capsys, argv, message):
        """Usage errors exit 2 with exactly one line on stderr, no usage block and no traceback."""
        code, out, err = run_cli(capsys, *argv)

        assert code == 2
        assert out == ""
        assert message in err
        assert err.startswith("toolctx: error: ")
        assert err.count("\n") == 1
        assert err.endswith("\n")

    @pytest.mark.parametrize(
        ("argv", "help_of"),
        [
            (["call", APP, "add", "--meta", "novalue"], "toolctx call"),
            (["call", APP, "add", "--turn", "x"], "toolctx call"),
            (["frobnicate"], "toolctx"),
        ],
    )
    def test_argparse_errors_point_to_the_help(self, capsys, argv, help_of):
        """An argparse error is one line that names the --help to read instead of printing the usage block."""
        code, _, err = run_cli(capsys, *argv)

        assert code == 2
        assert err.splitlines() == [err.rstrip("\n")]
        assert err.rstrip().endswith(f"(see '{help_of} --help')")
        assert "usage:" not in err

    def test_long_messages_are_cut(self, capsys):
        """An error line stays bounded however large the bad input is."""
        key = "k" * 5000
        code, _, err = run_cli(
            capsys, "call", APP, "add", f'{{"{key}": 1, "{key}": 2}}'
        )

        assert code == 2
        assert err.count("\n") == 1
        assert len(err.rstrip("\n")) <= 500
        assert err.endswith("...\n")

    def test_module_that_exits_when_imported(self, capsys, project):
        """A module that calls sys.exit() when imported (a script parsing its argv) is a usage error, not toolctx's exit code."""
        (project / "cli_exiting_app.py").write_text(
            "import sys\nsys.exit(3)\n"
        )

        code, _, err = run_cli(capsys, "list", "cli_exiting_app:registry")

        assert code == 2
        assert (
            "importing module 'cli_exiting_app' failed: SystemExit: 3" in err
        )
        assert err.count("\n") == 1

    def test_module_that_fails_to_import(self, capsys, project):
        """An exception while importing MODULE is shown with its type and place."""
        (project / "cli_broken_app.py").write_text(
            "x = 1\nraise RuntimeError('boom at import')\n"
        )

        code, _, err = run_cli(capsys, "list", "cli_broken_app:registry")

        assert code == 2
        assert (
            "importing module 'cli_broken_app' failed: RuntimeError: boom at import"
            in err
        )
        assert "cli_broken_app.py:2" in err
        assert "Traceback" not in err

    def test_module_with_a_missing_dependency(self, capsys, project):
        """A module whose own import is missing names that dependency."""
        (project / "cli_needs_dep.py").write_text(
            "import no_such_dependency_xyz\n"
        )

        code, _, err = run_cli(capsys, "list", "cli_needs_dep:registry")

        assert code == 2
        assert (
            "importing module 'cli_needs_dep' failed: ModuleNotFoundError"
            in err
        )
        assert "no_such_dependency_xyz" in err

    def test_serve_without_the_mcp_extra(self, capsys, monkeypatch):
        """The serve command without the MCP SDK says which extra to install."""
        monkeypatch.setitem(sys.modules, "mcp_types", None)

        code, out, err = run_cli(capsys, "serve", APP)

        assert (code, out) == (2, "")
        assert "pip install 'toolctx[mcp]'" in err

    def test_help_exits_0(self, capsys):
        """--help prints usage and exits 0."""
        code, out, _ = run_cli(capsys, "--help")

        assert code == 0
        assert "list" in out
        assert "serve" in out


class TestEntryPoint:
    """The module entry point."""

    def test_python_dash_m(self):
        """Running python -m toolctx works in a fresh process."""
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolctx",
                "call",
                APP,
                "add",
                '{"a": 20, "b": 22}',
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["output"] == 42

    def test_a_tool_that_exits_does_not_set_the_exit_code(self):
        """In a fresh process, a tool exiting with code 2 makes toolctx call exit 1 with the error printed, not with the tool's code."""
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolctx",
                "call",
                APP,
                "parse_flags",
                '{"flags": ["--count", "many"]}',
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["error"] == (
            "Tool 'parse_flags' failed: SystemExit: 2"
        )


# -- the real command, run from another working directory ---------------------

APP_PY = '''\
"""An app outside the test suite: it imports its own sibling module."""

from toolctx import Dispatcher, ExecutionContext, Registry, ToolDenied
from toolctx import report_progress
from toolctx.content import Image

import helper

registry = Registry()


@registry.tool
def ping() -> str:
    """Answer pong."""
    return helper.PONG


@registry.tool
def whoami(ctx: ExecutionContext) -> dict:
    """The session this call runs in."""
    return {"session_id": ctx.session_id}


@registry.tool
def work(steps: int) -> str:
    """Work in steps, reporting progress."""
    for step in range(1, steps + 1):
        report_progress(step, steps, f"step {step}")
    return "done"


@registry.tool
def pixel() -> Image:
    """A tiny image."""
    return Image(b"PNG!", "image/png")


@registry.tool(needs_approval=True)
def wire(amount: int) -> str:
    """Wire money (waits for a person)."""
    return "wired"


class DenyAll:
    def before(self, call, context):
        raise ToolDenied("nobody may call tools here")

    def after(self, call, context, result):
        return result


guarded = Dispatcher(registry, interceptors=[DenyAll()])


def make_registry() -> Registry:
    return registry


def make_dispatcher():
    return guarded


def needs(env: str) -> Registry:
    return registry


def boom() -> Registry:
    raise RuntimeError("no database")


def wrong():
    return 3


number = 3
'''

ONE_PY = '''\
from toolctx import Registry

registry = Registry()


@registry.tool
def only() -> str:
    """The only tool."""
    return "alone"


empty = Registry()
'''

PKG_SHARED_PY = '''\
from toolctx import Registry

registry = Registry()


@registry.tool
def one() -> int:
    """Return one."""
    return 1
'''


@pytest.fixture(name="place")
def _place(tmp_path) -> Path:
    """A project folder next to an empty working directory.

    proj/app.py imports its sibling helper.py; proj/pkg/tools.py imports
    from its package with a relative import; proj/broken/ holds files that
    fail in the ways a user's files do.
    """
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "broken").mkdir()
    (proj / "app.py").write_text(APP_PY)
    (proj / "helper.py").write_text('PONG = "pong"\n')
    (proj / "one.py").write_text(ONE_PY)
    (proj / "my-app.py").write_text(ONE_PY)
    (proj / "pkg" / "__init__.py").write_text("")
    (proj / "pkg" / "shared.py").write_text(PKG_SHARED_PY)
    (proj / "pkg" / "tools.py").write_text("from .shared import registry\n")
    (proj / "broken" / "raises.py").write_text(
        "x = 1\nraise RuntimeError('boom at import')\n"
    )
    (proj / "broken" / "syntax.py").write_text("x = (\n")
    (proj / "broken" / "needs_dep.py").write_text(
        "import no_such_dependency_xyz\n"
    )
    (proj / "broken" / "json.py").write_text("x = 1\n")
    (proj / "broken" / "notes.txt").write_text("registry = 1\n")
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture(name="inside")
def _inside(place, project, monkeypatch) -> Path:
    """The working directory of *place*, for main() in this process."""
    monkeypatch.chdir(place)
    return place


def toolctx(
    place: Path, *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run python -m toolctx ARGV in *place*, bounded."""
    return subprocess.run(
        [sys.executable, "-m", "toolctx", *argv],
        cwd=place,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class TestTargets:
    """Targets: a module or a .py file, naming a registry, dispatcher or factory."""

    def test_file_path_from_another_directory(self, place):
        """path/to/app.py:registry loads the file with its folder first on sys.path, so its own imports work."""
        done = toolctx(
            place, "list", "../proj/app.py:registry", "--format", "names"
        )

        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.splitlines() == [
            "ping",
            "whoami",
            "work",
            "pixel",
            "wire",
        ]

    def test_file_path_call_runs_the_tool(self, place):
        """A tool of a file target runs, using the module the file imports."""
        done = toolctx(place, "call", "../proj/app.py:registry", "ping")

        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["output"] == "pong"

    def test_absolute_file_path(self, place):
        """An absolute path works as well as a relative one."""
        app = place.parent / "proj" / "app.py"

        done = toolctx(place, "call", f"{app}:registry", "ping")

        assert json.loads(done.stdout)["output"] == "pong"

    def test_file_inside_a_package(self, place):
        """A file inside a package is imported as part of it, so its relative imports work."""
        done = toolctx(place, "call", "../proj/pkg/tools.py:registry", "one")

        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["output"] == 1

    def test_file_whose_name_is_no_identifier(self, place):
        """A file named like my-app.py loads too."""
        done = toolctx(
            place, "list", "../proj/my-app.py:registry", "--format", "names"
        )

        assert (done.returncode, done.stdout) == (0, "only\n")

    def test_app_dir(self, place):
        """--app-dir DIR imports MODULE from DIR, from any working directory."""
        done = toolctx(
            place, "call", "app:registry", "ping", "--app-dir", "../proj"
        )
        dotted = toolctx(
            place,
            "list",
            "pkg.tools:registry",
            "--app-dir",
            "../proj",
            "--format",
            "names",
        )

        assert json.loads(done.stdout)["output"] == "pong"
        assert (dotted.returncode, dotted.stdout) == (0, "one\n")

    def test_module_not_found_suggests_the_fixes(self, place):
        """A module that is not importable from here names the three ways to point at it."""
        done = toolctx(place, "list", "app:registry")

        assert done.returncode == 2
        assert done.stderr == (
            "toolctx: error: cannot import module 'app': No module named "
            "'app'. Run toolctx from the folder that contains it, pass "
            "--app-dir FOLDER, give the file's path "
            "(path/to/app.py:registry), or install its package.\n"
        )

    def test_dispatcher_target_runs_its_interceptors(self, place):
        """A Dispatcher target is used as it is: its interceptors run."""
        done = toolctx(place, "call", "../proj/app.py:guarded", "ping")

        assert done.returncode == 1
        assert "nobody may call tools here" in json.loads(done.stdout)["error"]

    @pytest.mark.parametrize(
        ("factory", "code"), [("make_registry", 0), ("make_dispatcher", 1)]
    )
    def test_factory_target(self, place, factory, code):
        """A function is called with no arguments; the Registry or Dispatcher it returns is the target."""
        done = toolctx(place, "call", f"../proj/app.py:{factory}", "ping")
        data = json.loads(done.stdout)

        assert done.returncode == code
        assert data["output"] == ("pong" if code == 0 else None)

    def test_console_script(self, place):
        """The installed toolctx script runs the same command."""
        script = Path(sys.executable).with_name("toolctx")
        if not script.exists():
            pytest.skip("no toolctx script next to this interpreter")

        done = subprocess.run(
            [str(script), "call", "../proj/app.py:registry", "ping"],
            cwd=place,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

        assert json.loads(done.stdout)["output"] == "pong"

    @pytest.mark.parametrize(
        ("target", "message"),
        [
            (
                "../proj/nope.py:registry",
                "toolctx: error: no such file: '../proj/nope.py' (looked for {work}/../proj/nope.py); give the path of the .py file that defines the registry",
            ),
            (
                "../proj/pkg:registry",
                "toolctx: error: '../proj/pkg' is not a Python file; give the path of the .py file that defines the registry",
            ),
            (
                "../proj/broken/notes.txt:registry",
                "toolctx: error: '../proj/broken/notes.txt' is not a Python file",
            ),
            (
                "../proj/app.py:nope",
                "toolctx: error: file '../proj/app.py' has no attribute 'nope'; registries and dispatchers there: guarded, registry, boom(), make_registry()",
            ),
            (
                "../proj/one.py:nope",
                "toolctx: error: file '../proj/one.py' has no attribute 'nope'; registries and dispatchers there: empty, registry",
            ),
            (
                "../proj/helper.py:PONG",
                "toolctx: error: ../proj/helper.py:PONG is a str, not a toolctx Registry or Dispatcher (or a factory returning one); it defines no Registry or Dispatcher at module level",
            ),
            (
                "../proj/app.py:number",
                "toolctx: error: ../proj/app.py:number is an int, not a toolctx Registry or Dispatcher (or a factory returning one); registries and dispatchers there: guarded, registry, boom(), make_registry()",
            ),
            (
                "../proj/app.py:ping",
                "toolctx: error: ../proj/app.py:ping is a tool, not a registry; name the Registry or Dispatcher that holds it; registries and dispatchers there:",
            ),
            (
                "../proj/app.py:needs",
                "toolctx: error: ../proj/app.py:needs is a factory that needs arguments (env: str); a factory target is called with none",
            ),
            (
                "../proj/app.py:boom",
                "toolctx: error: calling the factory ../proj/app.py:boom() failed: RuntimeError: no database (at {proj}/app.py:",
            ),
            (
                "../proj/app.py:wrong",
                "toolctx: error: ../proj/app.py:wrong() returned an int, not a toolctx Registry or Dispatcher",
            ),
            (
                "../proj/app.py",
                "toolctx: error: '../proj/app.py' is not a MODULE:ATTRIBUTE or FILE.py:ATTRIBUTE target (no colon: add one and the variable holding the registry), e.g. ../proj/app.py:guarded; registries and dispatchers there: guarded, registry, boom(), make_registry()",
            ),
            (
                "../proj/broken/raises.py:registry",
                "toolctx: error: importing '../proj/broken/raises.py' failed: RuntimeError: boom at import (at {proj}/broken/raises.py:2)",
            ),
            (
                "../proj/broken/syntax.py:registry",
                "toolctx: error: importing '../proj/broken/syntax.py' failed: SyntaxError: '(' was never closed (syntax.py, line 1)",
            ),
            (
                "../proj/broken/needs_dep.py:registry",
                "toolctx: error: importing '../proj/broken/needs_dep.py' failed: ModuleNotFoundError: No module named 'no_such_dependency_xyz' (at {proj}/broken/needs_dep.py:1)",
            ),
            (
                "../proj/broken/json.py:registry",
                "toolctx: error: cannot load '../proj/broken/json.py' as module 'json': that name is already taken by ",
            ),
        ],
    )
    def test_target_errors(self, capsys, inside, target, message):
        """A wrong target is one line on stderr, exit code 2, saying what is wrong and what to write instead."""
        proj = (inside.parent / "proj").resolve()

        code, out, err = run_cli(capsys, "list", target)

        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1
        assert "Traceback" not in err
        assert err.startswith(message.format(work=inside, proj=proj))

    def test_an_empty_registry_is_warned_about(self, place):
        """A target without tools still works, with a warning on stderr."""
        done = toolctx(place, "list", "../proj/one.py:empty")

        assert (done.returncode, json.loads(done.stdout)) == (0, [])
        assert done.stderr == (
            "toolctx: warning: ../proj/one.py:empty has no tools (are they "
            "registered in a module it does not import?)\n"
        )


class TestPipes:
    """Output into a pipe that closes early."""

    def test_a_reader_that_stops_early(self, place):
        """When the reader of `toolctx list` closes the pipe (head), toolctx stops with exit 1 and no traceback."""
        many = place / "many.py"
        many.write_text(
            "from toolctx import Registry, tool\n"
            "registry = Registry()\n"
            "for i in range(2000):\n"
            "    registry.register(tool(name=f't{i}')(lambda: 'x'))\n"
        )
        with subprocess.Popen(
            [sys.executable, "-m", "toolctx", "list", "many.py:registry"],
            cwd=place,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None
            assert proc.stderr is not None
            first = proc.stdout.readline()
            proc.stdout.close()
            err = proc.stderr.read()
            code = proc.wait(timeout=60)

        assert first == "[\n"
        assert (code, err) == (1, "")


class TestCallOutput:
    """toolctx call: content parts and progress."""

    def test_content_parts_print_as_json(self, place):
        """A tool returning an image prints its part with base64 data."""
        done = toolctx(place, "call", "../proj/app.py:registry", "pixel")

        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["output"] == [
            {"type": "image", "data": "UE5HIQ==", "mime_type": "image/png"}
        ]

    def test_a_call_waiting_for_approval_prints_its_request(self, place):
        """Nothing runs; the output says what waits, as the request's JSON."""
        done = toolctx(
            place, "call", "../proj/app.py:registry", "wire", '{"amount": 5}'
        )

        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data["output"] is None
        assert data["approval"]["format"] == "toolctx.approval/1"
        assert data["approval"]["call"]["arguments"] == {"amount": 5}

    def test_progress_goes_to_stderr(self, place):
        """Progress reports are lines on stderr while stdout stays one JSON document."""
        done = toolctx(
            place, "call", "../proj/app.py:registry", "work", '{"steps": 2}'
        )

        assert json.loads(done.stdout)["output"] == "done"
        assert done.stderr.splitlines() == [
            "toolctx: progress: work 1/2: step 1",
            "toolctx: progress: work 2/2: step 2",
        ]


# -- serve: the official MCP client against the real command ------------------


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bounded(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run *fn* on a fresh event loop, failing after 60 seconds."""
    anyio = pytest.importorskip("anyio")

    async def go() -> Any:
        with anyio.fail_after(60):
            return await fn()

    return anyio.run(go)


SERVE = [sys.executable, "-m", "toolctx", "serve"]


@pytest.fixture(name="mcp_client")
def _mcp_client() -> Any:
    """The official MCP SDK's client package."""
    return pytest.importorskip("mcp.client.session")


class TestServeStdio:
    """toolctx serve over stdio, from another working directory."""

    @pytest.mark.parametrize(
        ("target", "announced"),
        [
            ("../proj/app.py:registry", "serving 5 tools over MCP on stdio"),
            ("../proj/one.py:registry", "serving 1 tool over MCP on stdio"),
        ],
    )
    def test_file_target(self, place, mcp_client, tmp_path, target, announced):
        """The SDK's stdio client lists and calls a file target's tools; stderr says how many tools, in the right number."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=SERVE[0], args=[*SERVE[1:], target], cwd=str(place)
        )
        log = tmp_path / "stderr.txt"

        async def go() -> tuple[list[str], Any]:
            with log.open("w") as errlog:
                async with stdio_client(params, errlog=errlog) as (r, w):
                    async with mcp_client.ClientSession(r, w) as session:
                        await session.initialize()
                        tools = (await session.list_tools()).tools
                        first = tools[0].name
                        result = await session.call_tool(first, {})
            return [t.name for t in tools], result

        names, result = bounded(go)

        assert len(names) == int(announced.split()[1])
        assert result.is_error is False
        assert result.content[0].text in {"pong", "alone"}
        assert log.read_text().splitlines()[0] == f"toolctx: {announced}"


async def _serve_http(
    place: Path, argv: list[str], calls: Callable[[str], Awaitable[Any]]
) -> tuple[str, Any, int]:
    """Start toolctx serve ARGV in *place*, run *calls* on its URL, then SIGINT it."""
    import anyio

    from anyio.streams.buffered import BufferedByteReceiveStream

    async with await anyio.open_process(
        [*SERVE, *argv], cwd=str(place)
    ) as proc:
        assert proc.stderr is not None
        reader = BufferedByteReceiveStream(proc.stderr)
        line = (await reader.receive_until(b"\n", 4096)).decode()
        try:
            out = await calls(line.rsplit(" ", 1)[1])
        finally:
            proc.send_signal(signal.SIGINT)
        return line, out, await proc.wait()


async def _session_calls(
    url: str, *, seen: list[tuple[str, str]] | None = None
) -> dict[str, Any]:
    """List the tools and call ping and whoami with the official client.

    With *seen*, every HTTP response's (content-type, mcp-session-id)
    is appended to it.
    """
    import httpx2

    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def on_response(response: Any) -> None:
        if seen is not None and response.request.method == "POST":
            seen.append(
                (
                    response.headers.get("content-type", ""),
                    response.headers.get("mcp-session-id", ""),
                )
            )

    async with httpx2.AsyncClient(
        event_hooks={"response": [on_response]}
    ) as http:
        async with streamable_http_client(url, http_client=http) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                return {
                    "tools": [
                        t.name for t in (await session.list_tools()).tools
                    ],
                    "ping": await session.call_tool("ping", {}),
                    "whoami": await session.call_tool("whoami", {}),
                }


class TestServeHttp:
    """toolctx serve --transport http, reached with the official MCP client."""

    def test_serves_on_the_port_given(self, place, mcp_client):
        """--transport http --port N serves at the announced URL on port N, in SSE streams of one session, and stops with exit 130 on SIGINT."""
        port = free_port()
        seen: list[tuple[str, str]] = []
        argv = ["../proj/app.py:registry", "--transport", "http"]

        line, out, code = bounded(
            lambda: _serve_http(
                place,
                [*argv, "--port", str(port)],
                partial(_session_calls, seen=seen),
            )
        )
        sessions = {session for _, session in seen}

        assert line == (
            f"toolctx: serving 5 tools over MCP at http://127.0.0.1:{port}/mcp"
        )
        assert out["tools"] == ["ping", "whoami", "work", "pixel", "wire"]
        assert out["ping"].content[0].text == "pong"
        assert any(kind.startswith("text/event-stream") for kind, _ in seen)
        assert len(sessions) == 1
        assert out["whoami"].structured_content["session_id"] in sessions
        assert code == 130

    def test_host_and_path(self, place, mcp_client):
        """--host and --path choose the interface and the endpoint; --port 0 picks a free port; streamable-http (the MCP name) is the same transport as http."""
        argv = [
            "../proj/app.py:registry",
            "--transport",
            "streamable-http",
            "--host",
            "localhost",
            "--port",
            "0",
            "--path",
            "/tools",
        ]

        line, out, code = bounded(
            lambda: _serve_http(place, argv, _session_calls)
        )
        url = line.rsplit(" ", 1)[1]

        assert url.startswith("http://localhost:")
        assert url.endswith("/tools")
        assert out["ping"].content[0].text == "pong"
        assert code == 130

    def test_stateless_json_response(self, place, mcp_client):
        """--stateless serves without sessions and --json-response answers with JSON, not SSE."""
        seen: list[tuple[str, str]] = []
        argv = [
            "../proj/app.py:registry",
            "--transport",
            "http",
            "--port",
            "0",
            "--stateless",
            "--json-response",
        ]

        _, out, code = bounded(
            lambda: _serve_http(
                place, argv, partial(_session_calls, seen=seen)
            )
        )

        assert out["ping"].content[0].text == "pong"
        assert out["whoami"].structured_content == {"session_id": None}
        assert seen
        assert {session for _, session in seen} == {""}
        assert all(kind.startswith("application/json") for kind, _ in seen)
        assert code == 130

    def test_a_port_in_use(self, place, mcp_client):
        """A port another program holds ends the command with exit 2 and a last line that names the port and the fix."""
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]

            done = toolctx(
                place,
                "serve",
                "../proj/app.py:registry",
                "--transport",
                "http",
                "--port",
                str(port),
            )

        assert done.returncode == 2
        last = done.stderr.splitlines()[-1]
        assert last.startswith(
            f"toolctx: error: cannot serve HTTP on 127.0.0.1 port {port}: "
        )
        assert "address already in use" in last
        assert last.endswith(
            "; pick another --port (0 picks a free one) or --host"
        )
