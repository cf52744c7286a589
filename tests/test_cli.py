"""The ``toolctx`` command line: list, call, serve, and its error messages."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from collections.abc import Iterator
from pathlib import Path

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
            (["list", "tests.mcp_app"], "not a MODULE:ATTRIBUTE target"),
            (["list", ":registry"], "not a MODULE:ATTRIBUTE target"),
            (
                ["list", "no_such_module_xyz:registry"],
                "cannot import module 'no_such_module_xyz'",
            ),
            (
                ["list", "tests.mcp_app:nope"],
                "module 'tests.mcp_app' has no attribute 'nope'; registries and dispatchers there: broken, denying, registry",
            ),
            (
                ["list", "tests.mcp_app:not_a_registry"],
                "tests.mcp_app:not_a_registry is a dict, not a toolctx Registry or Dispatcher",
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
