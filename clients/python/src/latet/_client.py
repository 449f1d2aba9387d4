"""The client of the Latet control service's apps API: forget, mask, restore."""

from __future__ import annotations

import json
import logging
import os
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Union, overload

from ._errors import ConfigurationError, LatetError, Timeout, TransportError
from ._transport import build_opener, post_json

log = logging.getLogger("latet")

#: How long one call waits for its answer, in seconds (5 minutes: a forget
#: call may first open a large vault).
DEFAULT_TIMEOUT = 300.0
#: The apps API's limit of values in one forget call.
MAX_VALUES_PER_CALL = 1000
#: The largest forget body the client sends (the service takes 16 MiB).
MAX_FORGET_BODY_BYTES = 8 * 1024 * 1024

_FORGET_PATH = "/_latet/apps/v1/forget"
_MASK_PATH = "/_latet/apps/v1/mask"
_RESTORE_PATH = "/_latet/apps/v1/restore"

PathLike = Union[str, "os.PathLike[str]"]


class ForgetResult(NamedTuple):
    """What a forget did, each distinct value counted once."""

    #: Values the key's vault held, now forgotten.
    forgotten: int
    #: Values the vault did not hold (never seen, or forgotten before).
    unknown: int


class _Token:
    """A token that never prints itself."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def reveal(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return "<token hidden>"

    __str__ = __repr__


class Client:
    """A client of one Latet control service, with one key's token.

    Args:
        url: the service's base URL (``http://127.0.0.1:8787``); a path
            prefix is kept (``https://gw.example/latet``).
        token: the token (``lt_…``). Give ``token`` or ``token_file``, not
            both; with neither, ``LATET_TOKEN`` or ``LATET_TOKEN_FILE`` is
            read from the environment.
        token_file: a file holding the token (as ``latet server … --out``
            writes it); surrounding whitespace is ignored.
        timeout: how long each call waits for its answer, in seconds
            (default 300: 5 minutes).

    The token needs the permission of each route: ``forget`` for
    :meth:`forget` (a key's first token never holds it), ``mask`` and
    ``restore`` for the others. The token is never printed: not in
    ``repr``, not in a log line, not in an exception.

    Raises:
        ConfigurationError: no token, both a token and a token file, an
            unreadable token file, or a URL that is not http(s).
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        token_file: PathLike | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._url = _check_url(url)
        self._token = _resolve_token(token, token_file)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ConfigurationError("timeout: a positive number of seconds")
        self._timeout = float(timeout)
        self._opener = build_opener()

    @classmethod
    def from_env(cls, *, timeout: float = DEFAULT_TIMEOUT) -> Client:
        """A client from ``LATET_URL`` and ``LATET_TOKEN`` (or ``LATET_TOKEN_FILE``)."""
        url = os.environ.get("LATET_URL", "").strip()
        if not url:
            raise ConfigurationError("LATET_URL is not set: the control service's URL")
        return cls(url, timeout=timeout)

    @property
    def url(self) -> str:
        """The service's base URL."""
        return self._url

    @property
    def timeout(self) -> float:
        """How long each call waits for its answer, in seconds."""
        return self._timeout

    def __repr__(self) -> str:
        return f"Client(url={self._url!r}, token=<hidden>, timeout={self._timeout:g})"

    # -- forget -------------------------------------------------------------

    def forget(
        self, values: Iterable[str], *, batch_size: int = MAX_VALUES_PER_CALL
    ) -> ForgetResult:
        """Forgets ``values`` from the key's vault; returns the summed counts.

        The list may be of any length: it is sent in calls of at most
        ``batch_size`` values (at most 1,000, the API's limit). Each distinct
        value is counted once over the whole list, as the API counts within
        one call: duplicates are dropped before sending, first occurrence
        kept. Values are exact: other case or spacing is another value.
        Every value is checked before the first call, so a bad one sends
        nothing. An empty list sends nothing and returns
        ``ForgetResult(0, 0)``.

        Each call is one transaction on the service: its values are
        forgotten and its ``apps.forgotten`` admin-log row written together,
        or nothing changes (:class:`Unavailable`, 503). Each call waits up to
        the client's timeout (5 minutes by default).

        **A rerun is safe.** After a :class:`Timeout` the service may still
        have completed the call; after any failure the calls before it are
        done (the exception's ``done`` holds their counts). Forgetting is
        idempotent: send the same list again, and values already forgotten
        count as ``unknown`` (so the rerun's ``forgotten`` leaves out what
        the first run removed); a value that came back into the vault in the
        meantime is forgotten again. Each call of the rerun writes its own
        admin-log row.

        Forgetting an e-mail address leaves its company domain's own entry:
        forget the domain too if it must go.

        Raises:
            TypeError: ``values`` is one string, or holds a non-string (the
                message names its position).
            ValueError: a value is not valid Unicode or is too long for one
                call (named by position).
            Unauthorized: the service does not know the token (401).
            Forbidden: the token lacks the ``forget`` permission (403).
            BadRequest: the service refused the body (400).
            Unavailable: the store or the admin log refused (503); nothing of
                that call was forgotten.
            Timeout: no answer within the timeout.
            TransportError: the service could not be reached.
        """
        batches = _forget_batches(values, batch_size)
        forgotten = 0
        unknown = 0
        for number, batch in enumerate(batches, start=1):
            log.debug("forget: call %d of %d, %d values", number, len(batches), len(batch))
            try:
                answer = self._post(_FORGET_PATH, {"values": batch}, "forget", batch)
                counts = _forget_counts(answer)
            except LatetError as err:
                raise _forget_failure(
                    err, number, len(batches), ForgetResult(forgotten, unknown)
                ) from None
            forgotten += counts.forgotten
            unknown += counts.unknown
        log.debug("forget: %d calls, %d forgotten, %d unknown", len(batches), forgotten, unknown)
        return ForgetResult(forgotten, unknown)

    # -- mask and restore -----------------------------------------------------

    @overload
    def mask(self, text: str) -> str: ...  # type: ignore[overload-overlap]

    @overload
    def mask(self, text: Sequence[str]) -> list[str]: ...

    def mask(self, text: str | Sequence[str]) -> str | list[str]:
        """Masks plain text with the key's vault: one string, or a list.

        Values in the text (the detectors' findings and every value the
        vault holds) are replaced by their surrogates; new values get
        entries. One string gives one string (``{"text": …}`` on the wire);
        a list gives a list of the same length (``{"texts": […]}``). Needs
        the ``mask`` permission.

        Raises:
            TypeError, ValueError: a text is not a string or not valid
                Unicode (named by position).
            KeyDisabled: the key is disabled (403).
            Conflict: ``vault_full``: new values would pass the key's limit
                (409); nothing was created.
            PayloadTooLarge: the body passed the service's 16 MiB (413).
            and the errors :meth:`forget` lists for 401, 403, 400, 503 and
            the transport.
        """
        return self._texts(_MASK_PATH, "mask", text)

    @overload
    def restore(self, text: str) -> str: ...  # type: ignore[overload-overlap]

    @overload
    def restore(self, text: Sequence[str]) -> list[str]: ...

    def restore(self, text: str | Sequence[str]) -> str | list[str]:
        """Restores plain text: active surrogates back to their values.

        One string gives one string, a list a list of the same length, as
        :meth:`mask`. A retired surrogate (its value was forgotten) stays as
        written. Needs the ``restore`` permission. Raises as :meth:`mask`.
        """
        return self._texts(_RESTORE_PATH, "restore", text)

    def _texts(self, path: str, call: str, text: str | Sequence[str]) -> str | list[str]:
        if isinstance(text, str):
            _check_unicode(text, "text")
            answer = self._post(path, {"text": text}, call, [text])
            one = answer.get("text")
            if not isinstance(one, str):
                raise TransportError(f"{call}: the answer has no text")
            return one
        texts = _text_list(text)
        if not texts:
            return []
        answer = self._post(path, {"texts": texts}, call, texts)
        many = answer.get("texts")
        if not (
            isinstance(many, list)
            and len(many) == len(texts)
            and all(isinstance(t, str) for t in many)
        ):
            raise TransportError(f"{call}: the answer does not hold {len(texts)} texts")
        return many

    def _post(
        self, path: str, body: dict[str, Any], call: str, sent: Sequence[str]
    ) -> dict[str, Any]:
        return post_json(
            self._opener,
            self._url + path,
            self._token.reveal(),
            body,
            self._timeout,
            call,
            sent,
        )


def _check_url(url: str) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError("url: the control service's URL, e.g. http://127.0.0.1:8787")
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError("url: an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise ConfigurationError("url: holds credentials; give the token as token= or token_file=")
    if parts.query or parts.fragment:
        raise ConfigurationError("url: a base URL, without query or fragment")
    return url.strip().rstrip("/")


def _resolve_token(token: str | None, token_file: PathLike | None) -> _Token:
    """The token from the arguments, else from LATET_TOKEN or LATET_TOKEN_FILE."""
    if token is not None and token_file is not None:
        raise ConfigurationError("token and token_file: give one, not both")
    if token is not None:
        if not isinstance(token, str):
            raise ConfigurationError("token: expected str")
        return _check_token(token, "token")
    if token_file is not None:
        return _read_token_file(token_file, "token_file")
    env_token = os.environ.get("LATET_TOKEN")
    env_file = os.environ.get("LATET_TOKEN_FILE")
    if env_token and env_file:
        raise ConfigurationError("LATET_TOKEN and LATET_TOKEN_FILE are both set: set one")
    if env_token:
        return _check_token(env_token, "LATET_TOKEN")
    if env_file:
        return _read_token_file(env_file, "LATET_TOKEN_FILE")
    raise ConfigurationError(
        "no token: pass token= or token_file=, or set LATET_TOKEN or LATET_TOKEN_FILE"
    )


def _read_token_file(path: PathLike, source: str) -> _Token:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigurationError(
            f"{source} {os.fspath(path)}: cannot read it ({err.strerror})"
        ) from None
    except UnicodeDecodeError:
        raise ConfigurationError(f"{source} {os.fspath(path)}: not UTF-8") from None
    return _check_token(text, f"{source} {os.fspath(path)}")


def _check_token(text: str, source: str) -> _Token:
    token = text.strip()
    if not token:
        raise ConfigurationError(f"{source}: the token is empty")
    if not all("\x21" <= c <= "\x7e" for c in token):
        raise ConfigurationError(
            f"{source}: the token holds characters an HTTP header cannot carry"
        )
    return _Token(token)


def _check_unicode(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{where}: not valid Unicode (a lone surrogate)") from None


def _text_list(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, (bytes, bytearray)):
        raise TypeError("text: a string or a list of strings, not bytes")
    try:
        items = list(texts)
    except TypeError:
        raise TypeError(
            f"text: a string or a list of strings, not {type(texts).__name__}"
        ) from None
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"texts[{position}]: expected str, got {type(item).__name__}")
        _check_unicode(item, f"texts[{position}]")
    return items


def _forget_batches(values: Iterable[str], batch_size: int) -> list[list[str]]:
    """The distinct values in first-seen order, cut into calls.

    A call holds at most ``batch_size`` values and at most
    :data:`MAX_FORGET_BODY_BYTES` of JSON.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise TypeError("batch_size: expected int")
    if not 1 <= batch_size <= MAX_VALUES_PER_CALL:
        raise ValueError(f"batch_size: 1 to {MAX_VALUES_PER_CALL}")
    if isinstance(values, (str, bytes, bytearray)):
        raise TypeError("values: a list of strings, not one string")
    sizes: dict[str, int] = {}
    try:
        iterator = iter(values)
    except TypeError:
        raise TypeError(f"values: a list of strings, not {type(values).__name__}") from None
    envelope = len(b'{"values":[]}')
    for position, value in enumerate(iterator):
        if not isinstance(value, str):
            raise TypeError(f"values[{position}]: expected str, got {type(value).__name__}")
        if value in sizes:
            continue
        try:
            size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError(f"values[{position}]: not valid Unicode (a lone surrogate)") from None
        if envelope + size > MAX_FORGET_BODY_BYTES:
            raise ValueError(
                f"values[{position}]: {size} bytes as JSON, more than one call carries "
                f"({MAX_FORGET_BODY_BYTES})"
            )
        sizes[value] = size
    batches: list[list[str]] = []
    batch: list[str] = []
    batch_bytes = envelope
    for value, size in sizes.items():
        if batch and (len(batch) == batch_size or batch_bytes + 1 + size > MAX_FORGET_BODY_BYTES):
            batches.append(batch)
            batch, batch_bytes = [], envelope
        batch.append(value)
        batch_bytes += size + 1
    if batch:
        batches.append(batch)
    return batches


def _forget_counts(answer: dict[str, Any]) -> ForgetResult:
    forgotten = answer.get("forgotten")
    unknown = answer.get("unknown")
    for count in (forgotten, unknown):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TransportError(
                "forget: the answer does not hold the counts forgotten and unknown"
            )
    return ForgetResult(forgotten, unknown)  # type: ignore[arg-type]


def _forget_failure(err: LatetError, number: int, calls: int, done: ForgetResult) -> LatetError:
    """``err`` with which call failed, what the calls before it did, and what to do."""
    text = str(err)
    if calls > 1:
        text += f" (call {number} of {calls}"
        if number > 1:
            text += (
                f"; calls 1 to {number - 1} are done:"
                f" {done.forgotten} forgotten, {done.unknown} unknown"
            )
        text += ")"
    if isinstance(err, Timeout):
        text += (
            "; the service may have completed the call: rerunning the same list is safe"
            " (already forgotten values count as unknown)"
        )
    elif err.status == 503:
        text += "; nothing of this call was forgotten: rerunning the same list is safe"
    failure = type(err)(text, status=err.status, error_type=err.error_type)
    failure.done = done
    return failure
