"""One JSON POST to the apps API over the standard library's urllib.

Redirects are not followed (urllib would carry the Authorization header to
wherever the redirect points). Proxies come from the usual environment
variables (``https_proxy``, ``no_proxy``, …), as with any urllib client.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

from ._errors import LatetError, Timeout, TransportError, error_for_answer
from ._version import __version__

USER_AGENT = f"latet-python/{__version__}"

# Largest error or answer body read into memory (a mask answer of a 16 MiB
# request can be about as large again).
_MAX_ANSWER_BYTES = 64 * 1024 * 1024


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Turns every redirect into an error answer instead of following it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def build_opener() -> urllib.request.OpenerDirector:
    """An opener with urllib's defaults but redirects refused."""
    return urllib.request.build_opener(_RefuseRedirects)


def post_json(
    opener: urllib.request.OpenerDirector,
    url: str,
    token: str,
    body: dict[str, Any],
    timeout: float,
    call: str,
    sent: Iterable[str],
) -> dict[str, Any]:
    """POSTs ``body`` to ``url`` and returns the JSON object answered.

    ``call`` names the call in error messages; ``sent`` are the strings the
    body holds, so that an error answer quoting one of them is withheld.
    Raises a :class:`~latet.LatetError` subclass; never one that chains a
    urllib exception (those carry the request).
    """
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "Authorization": "Bearer " + token,
        },
    )
    failure: LatetError | None = None
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read(_MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as err:
        status = err.code
        try:
            error_body = err.read(64 * 1024)
        except (OSError, http.client.HTTPException):
            error_body = b""
        finally:
            err.close()
        failure = error_for_answer(call, status, error_body, sent, token)
        if 300 <= status < 400:
            failure = LatetError(
                f"{call}: the service answered {status}, a redirect: not followed "
                "(the token would go with it); give the service's own URL",
                status=status,
            )
    except urllib.error.URLError as err:
        failure = _transport_failure(call, err.reason, timeout)
    except (OSError, http.client.HTTPException) as err:
        failure = _transport_failure(call, err, timeout)
    if failure is not None:
        raise failure
    if len(raw) > _MAX_ANSWER_BYTES:
        raise TransportError(f"{call}: the answer passed {_MAX_ANSWER_BYTES} bytes")
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise TransportError(f"{call}: the answer is not JSON") from None
    if not isinstance(document, dict):
        raise TransportError(f"{call}: the answer is not a JSON object")
    return document


def _transport_failure(call: str, reason: object, timeout: float) -> LatetError:
    """The error for a call that got no answer: a timeout or a transport failure."""
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return Timeout(f"{call}: no answer within {timeout:g} s")
    detail = type(reason).__name__
    strerror = getattr(reason, "strerror", None)
    if isinstance(strerror, str) and strerror:
        detail += f" ({strerror})"
    elif isinstance(reason, str):
        detail = reason
    return TransportError(f"{call}: cannot reach the service: {detail}")
