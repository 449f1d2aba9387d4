"""The providers' official Python SDKs against the gateway, unchanged, pointed
at it by base URL: google-genai (Gemini), boto3 bedrock-runtime (Converse,
ConverseStream), openai (AzureOpenAI chat and embeddings; OpenAI embeddings
and legacy completions). The fake LLM is the provider: it echoes the last
user text, so each SDK must get back what the agent sent — restored — while
the fake's request log shows the provider only ever saw surrogates.

Run by envoy/e2e.sh (LATET_E2E_GATEWAY, LATET_E2E_FAKE). Every e-mail holds
`e2e-acme`, which e2e.sh looks for in the gateway's logs afterwards.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any, Iterator

import boto3
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as genai_types
from openai import AzureOpenAI, OpenAI

CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
# The forms a value may take in a body: as written, and without separators.
CARD_FORMS = (CARD, CARD.replace(" ", ""))
IBAN_FORMS = (IBAN, IBAN.replace(" ", ""))

GEMINI_MODEL = "gemini-2.5-flash"
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
AZURE_API_VERSION = "2024-10-21"


def fresh_email(tag: str) -> str:
    """An address no earlier test sent: tests share one vault."""
    return f"sdk.{tag}.{time.time_ns() % 1_000_000_000}@latet-e2e-acme.it"


def sentence(email: str) -> str:
    return f"Please write to {email}, pay with card {CARD} or to IBAN {IBAN} before noon."


def fake_log(fake: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{fake}/_fake/requests", timeout=10) as answer:
        log: list[dict[str, Any]] = json.load(answer)
        return log


def clear_fake_log(fake: str) -> None:
    request = urllib.request.Request(f"{fake}/_fake/requests", method="DELETE")
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.fixture
def log(fake: str) -> Iterator[Any]:
    """The fake's log, emptied before the test; call it to read it."""
    clear_fake_log(fake)
    yield lambda: fake_log(fake)


def assert_provider_saw_no_value(entries: list[dict[str, Any]], email: str, path_part: str) -> None:
    """Requests reached the provider at `path_part`, and none held a value
    (in its path, headers or body)."""
    assert entries, "no request reached the provider"
    assert any(path_part in e["path"] for e in entries), [e["path"] for e in entries]
    for entry in entries:
        seen = json.dumps(entry, ensure_ascii=False)
        for form in (email, *CARD_FORMS, *IBAN_FORMS):
            # The assertion message names the field, never the value.
            assert form not in seen, f"the provider saw a value at {entry['path']}"
        assert "Please write to " in entry["body"], "the text went up, masked"


# --- Google Gemini: google-genai -------------------------------------------


def gemini_client(gateway: str, headers: dict[str, str] | None = None) -> genai.Client:
    return genai.Client(
        api_key="gemini-e2e-dummy",
        http_options=genai_types.HttpOptions(base_url=gateway, headers=headers or {}),
    )


def test_gemini_generate_content(gateway: str, log: Any) -> None:
    email = fresh_email("gemini")
    text = sentence(email)
    # Kept in a variable: a Client closes its connection pool when dropped.
    client = gemini_client(gateway)
    answer = client.models.generate_content(model=GEMINI_MODEL, contents=text)
    assert answer.text == text
    assert_provider_saw_no_value(log(), email, f"/models/{GEMINI_MODEL}:generateContent")


def test_gemini_generate_content_stream(gateway: str, log: Any) -> None:
    email = fresh_email("gemini.stream")
    text = sentence(email)
    client = gemini_client(gateway, {"x-fake-chunk": "2"})
    chunks = list(client.models.generate_content_stream(model=GEMINI_MODEL, contents=text))
    assert len(chunks) > 10, "small chunks"
    assert "".join(chunk.text or "" for chunk in chunks) == text
    assert chunks[-1].candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert_provider_saw_no_value(log(), email, ":streamGenerateContent?alt=sse")


def test_gemini_function_call(gateway: str, log: Any) -> None:
    email = fresh_email("gemini.tool")
    text = sentence(email)
    client = gemini_client(gateway, {"x-fake-tool-call": "send_mail"})
    answer = client.models.generate_content(model=GEMINI_MODEL, contents=text)
    calls = answer.function_calls or []
    assert [c.name for c in calls] == ["send_mail"]
    assert calls[0].args == {"text": text}
    assert_provider_saw_no_value(log(), email, ":generateContent")


# --- Amazon Bedrock: boto3 bedrock-runtime -----------------------------------


@pytest.fixture
def bedrock(gateway: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A bedrock-runtime client on the gateway, with dummy credentials and
    region from the environment (and no shared config files read)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLATETE2EDUMMY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "latet-e2e-dummy-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=gateway,
        config=Config(retries={"max_attempts": 1}),
    )


def add_headers(client: Any, headers: dict[str, str]) -> None:
    """Adds the fake's control headers to every request (before signing)."""

    def hook(request: Any, **_: Any) -> None:
        for name, value in headers.items():
            request.headers[name] = value

    client.meta.events.register("before-sign.bedrock-runtime.*", hook)


def user_message(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"text": text}]}]


def test_bedrock_converse(bedrock: Any, log: Any) -> None:
    email = fresh_email("bedrock")
    text = sentence(email)
    answer = bedrock.converse(modelId=BEDROCK_MODEL, messages=user_message(text))
    assert answer["output"]["message"]["content"] == [{"text": text}]
    assert answer["stopReason"] == "end_turn"
    entries = log()
    assert_provider_saw_no_value(entries, email, "/converse")
    # SigV4 signed the agent's body; the provider got another (see report).
    assert entries[-1]["headers"]["authorization"].startswith("AWS4-HMAC-SHA256 ")


def test_bedrock_converse_stream(bedrock: Any, log: Any) -> None:
    email = fresh_email("bedrock.stream")
    text = sentence(email)
    add_headers(bedrock, {"x-fake-chunk": "2"})
    answer = bedrock.converse_stream(modelId=BEDROCK_MODEL, messages=user_message(text))
    events = list(answer["stream"])
    deltas = [e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e]
    assert len(deltas) > 10, "small chunks"
    assert "".join(deltas) == text
    assert events[-2]["messageStop"]["stopReason"] == "end_turn"
    assert "usage" in events[-1]["metadata"]
    assert_provider_saw_no_value(log(), email, "/converse-stream")


def test_bedrock_converse_stream_tool_use(bedrock: Any, log: Any) -> None:
    email = fresh_email("bedrock.tool")
    text = sentence(email)
    add_headers(bedrock, {"x-fake-tool-call": "send_mail", "x-fake-chunk": "3"})
    answer = bedrock.converse_stream(modelId=BEDROCK_MODEL, messages=user_message(text))
    events = list(answer["stream"])
    start = next(e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e)
    assert start["name"] == "send_mail"
    pieces = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert json.loads("".join(pieces)) == {"text": text}
    assert_provider_saw_no_value(log(), email, "/converse-stream")


# --- OpenAI: AzureOpenAI and OpenAI ------------------------------------------


def azure_client(gateway: str) -> AzureOpenAI:
    return AzureOpenAI(
        azure_endpoint=gateway,
        api_key="azure-e2e-dummy",
        api_version=AZURE_API_VERSION,
        max_retries=0,
    )


def openai_client(gateway: str) -> OpenAI:
    return OpenAI(base_url=f"{gateway}/v1", api_key="sk-e2e-dummy", max_retries=0)


def test_azure_chat(gateway: str, log: Any) -> None:
    email = fresh_email("azure")
    text = sentence(email)
    client = azure_client(gateway)
    answer = client.chat.completions.create(
        model="gpt-4o-e2e", messages=[{"role": "user", "content": text}]
    )
    assert answer.choices[0].message.content == text
    entries = log()
    assert_provider_saw_no_value(entries, email, "/openai/deployments/gpt-4o-e2e/chat/completions")
    assert f"api-version={AZURE_API_VERSION}" in entries[-1]["path"]
    assert entries[-1]["headers"]["api-key"] == "azure-e2e-dummy"


def test_azure_chat_stream(gateway: str, log: Any) -> None:
    email = fresh_email("azure.stream")
    text = sentence(email)
    client = azure_client(gateway)
    stream = client.chat.completions.create(
        model="gpt-4o-e2e",
        messages=[{"role": "user", "content": text}],
        stream=True,
        extra_headers={"x-fake-chunk": "2"},
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert len(pieces) > 10, "small chunks"
    assert "".join(pieces) == text
    assert_provider_saw_no_value(log(), email, "/chat/completions")


def test_azure_embeddings(gateway: str, log: Any) -> None:
    email = fresh_email("azure.embed")
    client = azure_client(gateway)
    answer = client.embeddings.create(model="emb-e2e", input=sentence(email))
    assert len(answer.data[0].embedding) == 8
    assert_provider_saw_no_value(log(), email, "/openai/deployments/emb-e2e/embeddings")


def test_openai_embeddings(gateway: str, log: Any) -> None:
    email = fresh_email("openai.embed")
    client = openai_client(gateway)
    answer = client.embeddings.create(
        model="text-embedding-3-small", input=[sentence(email), "a plain text"]
    )
    assert [len(d.embedding) for d in answer.data] == [8, 8]
    assert_provider_saw_no_value(log(), email, "/v1/embeddings")


def test_openai_completions(gateway: str, log: Any) -> None:
    email = fresh_email("openai.completions")
    text = sentence(email)
    client = openai_client(gateway)
    answer = client.completions.create(model="gpt-3.5-turbo-instruct", prompt=text)
    assert answer.choices[0].text == text
    assert_provider_saw_no_value(log(), email, "/v1/completions")


def test_openai_completions_stream(gateway: str, log: Any) -> None:
    email = fresh_email("openai.completions.stream")
    text = sentence(email)
    client = openai_client(gateway)
    stream = client.completions.create(
        model="gpt-3.5-turbo-instruct",
        prompt=text,
        stream=True,
        extra_headers={"x-fake-chunk": "2"},
    )
    pieces = [c.choices[0].text for c in stream if c.choices]
    assert len(pieces) > 10, "small chunks"
    assert "".join(pieces) == text
    assert_provider_saw_no_value(log(), email, "/v1/completions")
