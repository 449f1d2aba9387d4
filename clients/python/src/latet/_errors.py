"""The exceptions of the client: one base, one subclass per case a caller acts on.

Every message names the call, the HTTP status, the API's error type and, at
most, the service's own message (which names fields and counts). No message
ever holds a value, a text or the token: a service message that quotes
anything the call sent is withheld.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._client import ForgetResult


class LatetError(Exception):
    """Base of every error the client raises.

    Attributes:
        status: the HTTP status of the answer, or ``None`` when there was no
            answer (configuration, transport, timeout).
        error_type: the API's error type (``"bad_request"``, ``"unauthorized"``,
            ``"forbidden"``, ``"key_disabled"``, ``"vault_full"``,
            ``"unavailable"``, …), or ``None`` when the answer carried none.
        done: for ``forget``, the summed counts of the calls that completed
            before this one failed (``ForgetResult(0, 0)`` when it was the
            first); ``None`` for other calls.
    """

    status: int | None
    error_type: str | None
    done: ForgetResult | None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.done = None


class ConfigurationError(LatetError, ValueError):
    """The client cannot be built: no URL, no token, an unreadable token file."""


class BadRequest(LatetError):
    """400: the service refused the body (shape, counts); nothing changed."""


class Unauthorized(LatetError):
    """401: no token, or a token the service does not know."""


class Forbidden(LatetError):
    """403: the token lacks the permission the route needs (``forget``,
    ``mask`` or ``restore``)."""


class KeyDisabled(Forbidden):
    """403 ``key_disabled``: the key is disabled (mask and restore refuse;
    forget still works)."""


class Conflict(LatetError):
    """409: for mask, ``vault_full`` (new values would pass the key's limit);
    nothing was created."""


class PayloadTooLarge(LatetError):
    """413: the body passed the service's limit (16 MiB); send fewer texts."""


class Unavailable(LatetError):
    """503: the service's store failed or its admin log refused the row;
    nothing was changed. Safe to retry."""


class TransportError(LatetError):
    """No usable answer: the service could not be reached, or its answer was
    not the API's."""


class Timeout(TransportError):
    """The call waited longer than the client's timeout. The service may
    still have completed it; rerunning a forget is safe (already forgotten
    values count as unknown)."""


_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    409: Conflict,
    413: PayloadTooLarge,
    503: Unavailable,
}


def error_for_answer(
    call: str,
    status: int,
    body: bytes,
    sent: Iterable[str],
    token: str,
) -> LatetError:
    """The exception for an error answer of ``call`` (``"forget"``, …).

    ``sent`` are the strings the call sent and ``token`` its token: the
    service's message goes into the exception only if it holds none of them.
    """
    error_type: str | None = None
    service_message: str | None = None
    try:
        document = json.loads(body.decode("utf-8"))
        if isinstance(document, dict):
            if isinstance(document.get("error"), str):
                error_type = document["error"]
            if isinstance(document.get("message"), str):
                service_message = document["message"]
    except (ValueError, UnicodeDecodeError):
        pass  # not the API's JSON error (a proxy's page, axum's 413 text)
    cls = _BY_STATUS.get(status, LatetError)
    if cls is Forbidden and error_type == "key_disabled":
        cls = KeyDisabled
    text = f"{call}: the service answered {status}"
    if error_type:
        text += f" {error_type}"
    if service_message:
        if _quotes_any(service_message, sent, token):
            text += " (its message is withheld: it quoted what the call sent)"
        else:
            text += f": {service_message}"
    return cls(text, status=status, error_type=error_type)


def _quotes_any(message: str, sent: Iterable[str], token: str) -> bool:
    if token and token in message:
        return True
    return any(s and s in message for s in sent)
