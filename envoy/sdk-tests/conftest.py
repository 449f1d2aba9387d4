"""The gateway and the fake LLM, from the environment envoy/e2e.sh sets."""

import os

import pytest


def _url(variable: str) -> str:
    url = os.environ.get(variable)
    if not url:
        pytest.exit(f"{variable} is not set: run envoy/e2e.sh", returncode=2)
    return url.rstrip("/")


@pytest.fixture(scope="session")
def gateway() -> str:
    return _url("LATET_E2E_GATEWAY")


@pytest.fixture(scope="session")
def fake() -> str:
    return _url("LATET_E2E_FAKE")
