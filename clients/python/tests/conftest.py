"""A real `latet serve` on loopback for each test, as control/tests do.

The binary is `LATET_BIN`, else the debug build in Cargo's target
directory (`CARGO_TARGET_DIR` or `<repo>/target`), which `cargo build -p
latet` and `cargo test --workspace` make. Each test gets
its own server, SQLite file and admin token in a temp dir; keys and tokens
are made with the real CLI (`latet server … keys create / add-token`).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]

# Environment markers of coding agents (control/src/agent_env.rs): the CLI
# refuses some commands inside an agent, and the tests may run in one.
_AGENT_VARIABLES = {
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CURSOR_AGENT",
    "CODEX_SANDBOX",
    "GEMINI_CLI",
    "REPL_ID_AGENT",
    "AMP_AGENT",
    "WINDSURF_AGENT",
    "GOOSE_AGENT",
    "AGENT",
}
_AGENT_PREFIXES = ("AIDER_", "CLINE_", "ROO_CODE_", "CONTINUE_AGENT")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without agent markers, the master key or
    any LATET_* variable, plus ``extra``; proxies off for loopback."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _AGENT_VARIABLES
        and not name.startswith(_AGENT_PREFIXES)
        and not name.startswith("LATET_")
        and name.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env.update(extra)
    return env


def latet_bin() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = Path(os.environ.get("LATET_BIN") or (REPO / target) / "debug" / "latet")
    if not path.is_file():
        pytest.fail(f"no latet binary at {path}: run `cargo build -p latet` or set LATET_BIN")
    return path


class Server:
    """A running `latet serve`; stopped by its pid at the end of the test."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.db = directory / "latet.db"
        self.admin_token_file = directory / "admin.token"
        self.stderr = open(directory / "serve.stderr", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                str(latet_bin()),
                "serve",
                "--db",
                str(self.db),
                "--listen",
                "127.0.0.1:0",
                "--admin-token-file",
                str(self.admin_token_file),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=clean_env(),
        )
        self.url = self._listening_url()

    def _listening_url(self) -> str:
        """Waits (at most 60 s) for `latet listening on URL` on stdout."""
        assert self.process.stdout is not None
        lines: list[bytes] = []
        reader = threading.Thread(target=lambda: lines.append(self.process.stdout.readline()))  # type: ignore[union-attr]
        reader.daemon = True
        reader.start()
        reader.join(60)
        line = lines[0].decode() if lines else ""
        prefix = "latet listening on "
        if not line.startswith(prefix):
            self.stop()
            pytest.fail(f"latet serve did not start (first line {line!r}); see {self.stderr.name}")
        return line[len(prefix) :].strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()

    # -- the CLI --------------------------------------------------------------

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`latet server --server URL --admin-token-file F ARGS…`; must succeed."""
        command = [
            str(latet_bin()),
            "server",
            "--server",
            self.url,
            "--admin-token-file",
            str(self.admin_token_file),
            *args,
        ]
        done = subprocess.run(
            command,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
        )
        assert done.returncode == 0, f"latet server {' '.join(args)}: {done.stderr}"
        return done

    def create_key(self, name: str) -> Path:
        """A new key; returns the file of its first token (gateway, analyze, mask, restore)."""
        out = self.dir / f"{name}.token"
        self.cli("keys", "create", name, "--out", str(out))
        return out

    def add_token(self, key: str, name: str, *permissions: str) -> Path:
        """A token of ``key`` with ``permissions`` (``forget``, ``mask``, …); returns its file."""
        out = self.dir / f"{key}.{name}.token"
        flags = [f"--{p}" for p in permissions]
        self.cli("keys", "add-token", key, name, *flags, "--out", str(out))
        return out

    # -- raw HTTP, for what the client does not cover -------------------------

    def request(
        self, method: str, path: str, token: str | None = None, body: Any = None
    ) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def admin_token(self) -> str:
        return self.admin_token_file.read_text().strip()

    def admin_log(self, action: str) -> list[dict[str, Any]]:
        status, body = self.request(
            "GET", f"/_latet/admin/v1/log?action={action}", self.admin_token()
        )
        assert status == 200, body
        rows: list[dict[str, Any]] = json.loads(body)["log"]
        return rows

    def metrics(self) -> str:
        status, body = self.request("GET", "/metrics")
        assert status == 200
        return body.decode()

    def metric(self, name_and_labels: str) -> float:
        """The value of one sample line, 0 when absent."""
        for line in self.metrics().splitlines():
            if line.startswith(name_and_labels + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def add_entries(self, token: str, values: list[tuple[str, str]]) -> None:
        """Puts ``(kind, value)`` pairs into the vault through the gateway API."""
        for start in range(0, len(values), 1000):
            batch = [{"kind": k, "value": v} for k, v in values[start : start + 1000]]
            status, body = self.request(
                "POST",
                "/_latet/gateway/v1/entries",
                token,
                {"version": 1, "values": batch},
            )
            assert status == 200, body

    def snapshot(self, token: str) -> dict[str, Any]:
        status, body = self.request("GET", "/_latet/gateway/v1/snapshot", token)
        assert status == 200, body
        document: dict[str, Any] = json.loads(body)
        return document


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def shop(server: Server) -> dict[str, Path]:
    """Key "Shop": its first token and an "erasure" token with forget only."""
    return {
        "first": server.create_key("Shop"),
        "erasure": server.add_token("Shop", "erasure", "forget"),
    }


@pytest.fixture(autouse=True)
def no_latet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests set LATET_* themselves; loopback never goes through a proxy."""
    for name in list(os.environ):
        if name.startswith("LATET_") and name != "LATET_BIN":
            monkeypatch.delenv(name)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
