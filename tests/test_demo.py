"""The demo in examples/ runs and shows what the README promises."""

from __future__ import annotations

import subprocess
import sys

from pathlib import Path


DEMO = Path(__file__).parent.parent / "examples" / "demo.py"


class TestDemo:
    """examples/demo.py: a scripted two-turn agent conversation."""

    def test_demo_runs_and_tells_the_story(self) -> None:
        """The demo exits 0 and shows refusals, audit lines and the legacy tool."""
        done = subprocess.run(
            [sys.executable, str(DEMO)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        out = done.stdout
        assert "Turn 1 - user ada" in out
        assert "Turn 2 - user ada" in out
        assert "get_weather" in out
        assert '"temp_c": 21' in out  # the legacy execute(args) tool ran
        assert "deleted doc-2" in out
        assert "ada may not delete doc-3" in out  # another user's document
        assert "doc_id: expected a string, got 3" in out  # bad arguments
        assert "user=ada session=chat-42 turn=2" in out  # the audit line
        assert "Documents left: doc-1, doc-3" in out
