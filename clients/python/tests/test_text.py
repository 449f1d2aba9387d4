"""mask and restore mirror the apps API's shapes: one text in, one text out;
a list in, a list of the same length out."""

from __future__ import annotations

from pathlib import Path

import pytest

import latet
from conftest import Server

TEXT = "order 17 by mario.rossi@acme.it, call +39 347 123 4567"


def test_one_text_round_trip(server: Server, shop: dict[str, Path]) -> None:
    client = latet.Client(server.url, token_file=shop["first"])
    masked = client.mask(TEXT)
    assert isinstance(masked, str)
    assert "mario.rossi" not in masked and "347 123 4567" not in masked
    assert masked.startswith("order 17 by ")
    assert client.restore(masked) == TEXT
    # Masking again gives the same surrogates (the vault holds the values).
    assert client.mask(TEXT) == masked


def test_a_list_round_trip(server: Server, shop: dict[str, Path]) -> None:
    client = latet.Client(server.url, token_file=shop["first"])
    texts = [TEXT, "nothing personal here", "", "write to anna.verdi@gmail.com"]
    masked = client.mask(texts)
    assert isinstance(masked, list) and len(masked) == 4
    assert masked[1:3] == ["nothing personal here", ""]
    assert "anna.verdi" not in masked[3]
    assert client.restore(masked) == texts
    assert client.restore(tuple(masked)) == texts
    assert client.mask([]) == []


def test_a_forgotten_value_no_longer_restores(server: Server, shop: dict[str, Path]) -> None:
    client = latet.Client(server.url, token_file=shop["first"])
    masked = client.mask("call +39 347 123 4567")
    eraser = latet.Client(server.url, token_file=shop["erasure"])
    assert eraser.forget(["+39 347 123 4567"]) == latet.ForgetResult(1, 0)
    # The retired surrogate stays as written (rule F7).
    assert client.restore(masked) == masked


@pytest.mark.parametrize(
    ("argument", "error", "names"),
    [
        ([TEXT, 7], TypeError, "texts[1]: expected str, got int"),
        (["ok", "bad \ud800"], ValueError, "texts[1]: not valid Unicode"),
        ("bad \udfff", ValueError, "text: not valid Unicode"),
        (b"bytes", TypeError, "text: a string or a list of strings, not bytes"),
        (42, TypeError, "text: a string or a list of strings, not int"),
    ],
)
def test_bad_arguments_name_the_position(argument: object, error: type, names: str) -> None:
    client = latet.Client("http://127.0.0.1:9", token="lt_never_sent")
    with pytest.raises(error) as raised:
        client.mask(argument)  # type: ignore[call-overload]
    assert str(raised.value).startswith(names)
    assert "mario" not in str(raised.value)
