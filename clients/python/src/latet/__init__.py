"""Python client of the Latet gateway's control service: the apps API.

Forget values from a key's vault (GDPR erasure), mask and restore plain
text. Standard library only::

    import latet  # LATET_URL, and LATET_TOKEN or LATET_TOKEN_FILE: a token with forget
    result = latet.forget(["mario.rossi@acme.it", "+39 347 123 4567"])
    print(result)  # ForgetResult(forgotten=2, unknown=0) when the vault held both

or with an explicit client::

    client = latet.Client("http://127.0.0.1:8787", token_file="erasure.token")
    client.forget(values)

The module-level functions read the environment at each call:
``LATET_URL`` (the control service), ``LATET_TOKEN`` or ``LATET_TOKEN_FILE``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import overload

from ._client import (
    DEFAULT_TIMEOUT,
    MAX_VALUES_PER_CALL,
    Client,
    ForgetResult,
)
from ._errors import (
    BadRequest,
    ConfigurationError,
    Conflict,
    Forbidden,
    KeyDisabled,
    LatetError,
    PayloadTooLarge,
    Timeout,
    TransportError,
    Unauthorized,
    Unavailable,
)
from ._version import __version__ as __version__

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_VALUES_PER_CALL",
    "BadRequest",
    "Client",
    "ConfigurationError",
    "Conflict",
    "Forbidden",
    "ForgetResult",
    "KeyDisabled",
    "LatetError",
    "PayloadTooLarge",
    "Timeout",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "forget",
    "mask",
    "restore",
]


def forget(values: Iterable[str]) -> ForgetResult:
    """Forgets ``values`` with a client from the environment: see :meth:`Client.forget`.

    Reads ``LATET_URL`` and ``LATET_TOKEN`` (or ``LATET_TOKEN_FILE``) at each
    call. Sends calls of at most 1,000 values, each distinct value counted
    once, and returns the summed ``ForgetResult(forgotten, unknown)``. A
    rerun after a timeout or a failure is safe: values already forgotten
    count as unknown.
    """
    return Client.from_env().forget(values)


@overload
def mask(text: str) -> str: ...  # type: ignore[overload-overlap]


@overload
def mask(text: Sequence[str]) -> list[str]: ...


def mask(text: str | Sequence[str]) -> str | list[str]:
    """Masks one text or a list with a client from the environment: see :meth:`Client.mask`."""
    return Client.from_env().mask(text)


@overload
def restore(text: str) -> str: ...  # type: ignore[overload-overlap]


@overload
def restore(text: Sequence[str]) -> list[str]: ...


def restore(text: str | Sequence[str]) -> str | list[str]:
    """Restores one text or a list with a client from the environment: see :meth:`Client.restore`."""
    return Client.from_env().restore(text)
