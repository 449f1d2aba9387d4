"""The module-level functions read LATET_URL and LATET_TOKEN (or
LATET_TOKEN_FILE), and the READMEs' three-line example runs as written."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

import latet
from conftest import REPO, Server, clean_env

TOUR = "Write to mario.rossi@acme.it or call +39 347 123 4567"


def test_forget_mask_restore_from_the_environment(
    server: Server,
    shop: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="latet")
    monkeypatch.setenv("LATET_URL", server.url)
    first = shop["first"].read_text().strip()
    monkeypatch.setenv("LATET_TOKEN", first)
    masked = latet.mask(TOUR)
    assert "mario.rossi" not in masked
    assert latet.restore([masked]) == [TOUR]

    monkeypatch.delenv("LATET_TOKEN")
    monkeypatch.setenv("LATET_TOKEN_FILE", str(shop["erasure"]))
    values = ["mario.rossi@acme.it", "+39 347 123 4567", "nadie@example.org"]
    assert latet.forget(values) == latet.ForgetResult(forgotten=2, unknown=1)

    # The debug log says counts and nothing else.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "forget: call 1 of 1, 3 values" in logged
    assert first not in logged and shop["erasure"].read_text().strip() not in logged
    assert not any(v in logged for v in values) and "Write to" not in logged


def example(readme: Path) -> str:
    """The ```python block of ``readme`` that calls latet.forget."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.DOTALL)
    found = [b for b in blocks if "latet.forget(" in b]
    assert len(found) == 1, f"{readme}: one python example with latet.forget"
    return str(found[0])


def test_the_readme_example_runs_as_written(server: Server, shop: dict[str, Path]) -> None:
    code = example(REPO / "README.md")
    assert code == example(REPO / "clients" / "python" / "README.md")
    assert len(code.strip().splitlines()) == 3
    # The vault holds both values of the example (the tour's request).
    latet.Client(server.url, token_file=shop["first"]).mask(TOUR)

    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(
            LATET_URL=server.url,
            LATET_TOKEN_FILE=str(shop["erasure"]),
            no_proxy="127.0.0.1",
        ),
    )
    assert done.returncode == 0, done.stderr
    printed_line = next(line for line in code.splitlines() if line.startswith("print("))
    promised = printed_line.split("# ", 1)[1]
    assert promised.startswith(done.stdout.strip() + " "), (done.stdout, promised)
    assert done.stdout.strip() == "ForgetResult(forgotten=2, unknown=0)"
