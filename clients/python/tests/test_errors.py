"""Errors as exceptions carrying the HTTP status and the API's error type,
and never a value or the token in what they print."""

from __future__ import annotations

import http.server
import socket
import sqlite3
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

import latet
from conftest import Server

VALUES = ["mario.rossi@acme.it", "+39 347 123 4567"]
REFUSE_LOG = (
    "CREATE TRIGGER refuse_log BEFORE INSERT ON admin_log "
    "BEGIN SELECT RAISE(ABORT, 'injected fault'); END;"
)


def printed(err: BaseException) -> str:
    """Everything a log or a traceback would show of ``err``."""
    return "\n".join([str(err), repr(err), *traceback.format_exception(err)])


def assert_quotes_nothing(err: BaseException, token: str, values: list[str]) -> None:
    text = printed(err)
    assert token not in text, "the token is in the error"
    for value in values:
        assert value not in text, "a value is in the error"
    chained = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    assert chained is None, "no urllib exception chained"


def token_of(path: Path) -> str:
    return path.read_text().strip()


def test_401_unknown_token(server: Server) -> None:
    token = "lt_0123456789abcdef_not_a_real_token"
    with pytest.raises(latet.Unauthorized) as raised:
        latet.Client(server.url, token=token).forget(VALUES)
    err = raised.value
    assert (err.status, err.error_type) == (401, "unauthorized")
    assert err.done == latet.ForgetResult(0, 0)
    assert_quotes_nothing(err, token, VALUES)


def test_403_token_without_forget(server: Server, shop: dict[str, Path]) -> None:
    # The key's first token (gateway, analyze, mask, restore) never forgets (F3).
    with pytest.raises(latet.Forbidden) as raised:
        latet.Client(server.url, token_file=shop["first"]).forget(VALUES)
    err = raised.value
    assert (err.status, err.error_type) == (403, "forbidden")
    assert "`forget` permission" in str(err)
    assert_quotes_nothing(err, token_of(shop["first"]), VALUES)
    # And the forget-only token cannot mask.
    with pytest.raises(latet.Forbidden) as raised:
        latet.Client(server.url, token_file=shop["erasure"]).mask("call " + VALUES[1])
    assert "`mask` permission" in str(raised.value)
    assert_quotes_nothing(raised.value, token_of(shop["erasure"]), VALUES)


def test_503_when_the_admin_log_refuses(server: Server, shop: dict[str, Path]) -> None:
    first = token_of(shop["first"])
    server.add_entries(first, [("email", VALUES[0]), ("phone", VALUES[1])])
    before = server.snapshot(first)
    with sqlite3.connect(server.db) as db:
        db.execute(REFUSE_LOG)
    client = latet.Client(server.url, token_file=shop["erasure"])

    with pytest.raises(latet.Unavailable) as raised:
        client.forget(VALUES)
    err = raised.value
    assert (err.status, err.error_type) == (503, "unavailable")
    assert "rerunning the same list is safe" in str(err)
    assert_quotes_nothing(err, token_of(shop["erasure"]), VALUES)
    assert server.snapshot(first) == before, "nothing forgotten"

    with sqlite3.connect(server.db) as db:
        db.execute("DROP TRIGGER refuse_log")
    assert client.forget(VALUES) == latet.ForgetResult(forgotten=2, unknown=0)


def test_a_failed_call_reports_the_calls_before_it_and_a_rerun_finishes(
    server: Server, shop: dict[str, Path]
) -> None:
    values = [f"Person{i:05d} Test" for i in range(1500)]
    server.add_entries(token_of(shop["first"]), [("name", v) for v in values])
    # The admin log takes the first call's row and refuses the second's.
    with sqlite3.connect(server.db) as db:
        db.execute(
            "CREATE TRIGGER refuse_second BEFORE INSERT ON admin_log "
            "WHEN NEW.action = 'apps.forgotten' AND "
            "(SELECT count(*) FROM admin_log WHERE action = 'apps.forgotten') >= 1 "
            "BEGIN SELECT RAISE(ABORT, 'injected fault'); END;"
        )
    client = latet.Client(server.url, token_file=shop["erasure"])
    with pytest.raises(latet.Unavailable) as raised:
        client.forget(values)
    assert raised.value.done == latet.ForgetResult(forgotten=1000, unknown=0)
    assert "call 2 of 2; calls 1 to 1 are done: 1000 forgotten, 0 unknown" in str(raised.value)
    assert_quotes_nothing(raised.value, token_of(shop["erasure"]), values)

    with sqlite3.connect(server.db) as db:
        db.execute("DROP TRIGGER refuse_second")
    # The rerun: the first call's values are gone (unknown), the rest go now.
    assert client.forget(values) == latet.ForgetResult(forgotten=500, unknown=1000)


def test_400_carries_the_services_message_unless_it_quotes_the_input(
    server: Server, shop: dict[str, Path]
) -> None:
    # The client never sends more than 1,000 values; send 1,001 by hand
    # through its transport to see the service's 400.
    client = latet.Client(server.url, token_file=shop["erasure"])
    values = [f"value-{i}@example.org" for i in range(1001)]
    with pytest.raises(latet.BadRequest) as raised:
        client._post("/_latet/apps/v1/forget", {"values": values}, "forget", values)
    err = raised.value
    assert (err.status, err.error_type) == (400, "bad_request")
    assert str(err).endswith("values: 1001 given, at most 1000 a call")
    assert_quotes_nothing(err, token_of(shop["erasure"]), values)

    # A value that the service's message happens to contain: withheld.
    values[0] = "at most"
    with pytest.raises(latet.BadRequest) as raised:
        client._post("/_latet/apps/v1/forget", {"values": values}, "forget", values)
    assert "withheld" in str(raised.value)
    assert_quotes_nothing(raised.value, token_of(shop["erasure"]), values)


def test_a_disabled_key_refuses_mask_but_forgets(server: Server, shop: dict[str, Path]) -> None:
    server.cli("keys", "disable", "Shop")
    with pytest.raises(latet.KeyDisabled) as raised:
        latet.Client(server.url, token_file=shop["first"]).mask(["call " + VALUES[1]])
    assert (raised.value.status, raised.value.error_type) == (403, "key_disabled")
    assert isinstance(raised.value, latet.Forbidden)
    assert_quotes_nothing(raised.value, token_of(shop["first"]), VALUES)
    eraser = latet.Client(server.url, token_file=shop["erasure"])
    assert eraser.forget(VALUES) == latet.ForgetResult(0, 2)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_timeout_says_a_rerun_is_safe(silent_port: int) -> None:
    token = "lt_timeout_test_token"
    client = latet.Client(f"http://127.0.0.1:{silent_port}", token=token, timeout=0.5)
    assert client.timeout == 0.5
    with pytest.raises(latet.Timeout) as raised:
        client.forget(VALUES)
    err = raised.value
    assert err.status is None and err.done == latet.ForgetResult(0, 0)
    assert "no answer within 0.5 s" in str(err)
    assert "rerunning the same list is safe" in str(err)
    assert_quotes_nothing(err, token, VALUES)


def test_unreachable_service() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "lt_unreachable_test_token"
    with pytest.raises(latet.TransportError) as raised:
        latet.Client(f"http://127.0.0.1:{port}", token=token).restore(VALUES[0])
    assert "cannot reach the service" in str(raised.value)
    assert_quotes_nothing(raised.value, token, VALUES)


def test_a_redirect_is_not_followed_and_the_token_stays_home() -> None:
    seen_tokens: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path.startswith("/elsewhere"):
                seen_tokens.append(self.headers.get("Authorization", ""))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b'{"forgotten": 0, "unknown": 0}')
                return
            self.send_response(307)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        token = "lt_redirect_test_token"
        client = latet.Client(f"http://127.0.0.1:{httpd.server_port}", token=token)
        with pytest.raises(latet.LatetError) as raised:
            client.forget(VALUES)
        assert raised.value.status == 307
        assert "not followed" in str(raised.value)
        assert_quotes_nothing(raised.value, token, VALUES)
        assert seen_tokens == []
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(
    ("values", "error", "names"),
    [
        ("mario.rossi@acme.it", TypeError, "values: a list of strings, not one string"),
        (["ok", None], TypeError, "values[1]: expected str, got NoneType"),
        (["ok", "ok", "bad \ud800"], ValueError, "values[2]: not valid Unicode"),
        (["x" * (8 * 1024 * 1024)], ValueError, "values[0]: 8388610 bytes as JSON"),
        (5, TypeError, "values: a list of strings, not int"),
    ],
)
def test_bad_values_name_the_position_and_send_nothing(
    values: object, error: type, names: str
) -> None:
    # Port 9 (discard) is never reached: the values are checked first.
    client = latet.Client("http://127.0.0.1:9", token="lt_never_sent")
    with pytest.raises(error) as raised:
        client.forget(values)  # type: ignore[arg-type]
    assert str(raised.value).startswith(names)
    assert "mario" not in str(raised.value) and "xxxx" not in str(raised.value)


@pytest.mark.parametrize("batch_size", [0, 1001])
def test_batch_size_is_bounded(batch_size: int) -> None:
    client = latet.Client("http://127.0.0.1:9", token="lt_never_sent")
    with pytest.raises(ValueError, match=r"batch_size: 1 to 1000"):
        client.forget(VALUES, batch_size=batch_size)
