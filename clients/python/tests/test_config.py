"""Building a client: URL and token sources, and a token that never prints."""

from __future__ import annotations

import importlib.resources
import logging
from pathlib import Path

import pytest

import latet

TOKEN = "lt_config_test_token_0123456789"


def test_the_token_never_prints(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="latet")
    client = latet.Client("http://127.0.0.1:8787/", token=TOKEN)
    assert client.url == "http://127.0.0.1:8787"
    assert TOKEN not in repr(client) and TOKEN not in str(client)
    assert "token=<hidden>" in repr(client)
    assert TOKEN not in repr(vars(client))


def test_token_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token_file = tmp_path / "erasure.token"
    token_file.write_text(TOKEN + "\n")
    cases = [
        ({"token": TOKEN}, {}),
        ({"token_file": token_file}, {}),
        ({"token_file": str(token_file)}, {}),
        ({}, {"LATET_TOKEN": TOKEN}),
        ({}, {"LATET_TOKEN_FILE": str(token_file)}),
        # An argument wins over the environment.
        ({"token": TOKEN}, {"LATET_TOKEN": "lt_other"}),
    ]
    for arguments, env in cases:
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            client = latet.Client("http://127.0.0.1:8787", **arguments)  # type: ignore[arg-type]
            assert client._token.reveal() == TOKEN, (arguments, env)


@pytest.mark.parametrize(
    ("arguments", "env", "names"),
    [
        ({}, {}, "no token: pass token= or token_file=, or set LATET_TOKEN or LATET_TOKEN_FILE"),
        ({"token": TOKEN, "token_file": "x"}, {}, "token and token_file: give one"),
        ({}, {"LATET_TOKEN": TOKEN, "LATET_TOKEN_FILE": "x"}, "LATET_TOKEN and LATET_TOKEN_FILE"),
        ({"token": "  "}, {}, "token: the token is empty"),
        ({"token": TOKEN + "\r\nX-Evil: 1"}, {}, "token: the token holds characters"),
        (
            {"token_file": "/nonexistent/erasure.token"},
            {},
            "token_file /nonexistent/erasure.token: cannot read it",
        ),
    ],
)
def test_configuration_errors_never_show_the_token(
    arguments: dict[str, str], env: dict[str, str], names: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(latet.ConfigurationError) as raised:
        latet.Client("http://127.0.0.1:8787", **arguments)  # type: ignore[arg-type]
    assert str(raised.value).startswith(names)
    assert TOKEN not in str(raised.value)
    assert isinstance(raised.value, ValueError) and raised.value.status is None


@pytest.mark.parametrize(
    "url",
    ["", "127.0.0.1:8787", "ftp://host", "http://user:pw@host", "http://host/?q=1", "http://"],
)
def test_bad_urls(url: str) -> None:
    with pytest.raises(latet.ConfigurationError, match=r"^url: "):
        latet.Client(url, token=TOKEN)


def test_module_functions_need_latet_url() -> None:
    with pytest.raises(latet.ConfigurationError, match="LATET_URL is not set"):
        latet.forget(["x"])


def test_the_package_is_typed() -> None:
    assert (importlib.resources.files("latet") / "py.typed").is_file()
