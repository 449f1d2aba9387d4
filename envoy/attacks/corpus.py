#!/usr/bin/env python3
"""The attack corpus, as code: prints envoy/attacks/corpus.jsonl.

    python3 envoy/attacks/corpus.py > envoy/attacks/corpus.jsonl   # regenerate
    python3 envoy/attacks/corpus.py --check                        # is the file current?

This file is the source; corpus.jsonl is its output, one attack per line,
and what the runner (envoy/fake-llm/tests/attacks.rs) reads. envoy/attacks.sh
refuses a stale corpus.jsonl. See envoy/attacks/README.md for the fields.

Every invented value is minted here by a factory (e-mail, phone, IBAN, card,
IP, secret), each call a new value: no two attacks share one, so a leak names
its attack. E-mails end in an atk-corp domain and secrets hold "AtkCorp"
(the marker envoy/attacks.sh greps the logs for); numbers, IBANs and IPs
carry no marker: the runner scans the logs for every value itself.
"""

import base64
import hashlib
import json
import sys

# --- value factories --------------------------------------------------------

_counter = [0]


def _n():
    _counter[0] += 1
    return _counter[0]


def _hash(tag, n, alphabet, length):
    out = []
    seed = f"{tag}:{n}".encode()
    i = 0
    while len(out) < length:
        for b in hashlib.sha256(seed + str(i).encode()).digest():
            out.append(alphabet[b % len(alphabet)])
        i += 1
    return "".join(out[:length])


ALNUM = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
UPPER_DIGIT = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
FIRST = ["giulia", "marco", "sofia", "luca", "elena", "paolo", "chiara", "davide", "anna", "pietro"]
LAST = ["rossi", "bianchi", "ferri", "conti", "greco", "marino", "galli", "costa"]
TLD = ["it", "de", "es", "com", "eu"]


def email():
    n = _n()
    return f"{FIRST[n % len(FIRST)]}.{LAST[n % len(LAST)]}.{n:03d}@atk-corp.{TLD[n % len(TLD)]}"


def _k():
    n = _n()
    return n, (n * 37 + 1234) % 10000


def phone():
    """International, spaced: +39 347 017 1863."""
    k, k2 = _k()
    return f"+39 347 {k:03d} {k2:04d}"


def phone_compact():
    k, k2 = _k()
    return f"+39348{k:03d}{k2:04d}"


def phone_de():
    k, k2 = _k()
    return f"+49 151 {k:04d}{k2:04d}"


def phone_us():
    k, k2 = _k()
    return f"+1 (415) 555-{k2:04d}" if k % 2 else f"+1 212 {k:03d} {k2:04d}"


def phone_local_it():
    """Italian mobile without prefix: 347 017 1863."""
    k, k2 = _k()
    return f"349 {k:03d} {k2:04d}"


def phone_local_de():
    """German national with trunk 0: 030 1234567."""
    k, k2 = _k()
    return f"030 {k:03d}{k2:04d}"


def _luhn_complete(digits):
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = int(d)
        if i % 2 == 0:  # positions that get doubled once the check digit is appended
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return digits + str((10 - total % 10) % 10)


def card():
    """Visa, 16 digits contiguous."""
    n = _n()
    return _luhn_complete(f"4539{(n * 7919) % 10**11:011d}")


def card_spaced(sep=" "):
    n = _n()
    d = _luhn_complete(f"5425{(n * 6271) % 10**11:011d}")
    return sep.join(d[i:i + 4] for i in range(0, 16, 4))


def card_amex():
    n = _n()
    d = _luhn_complete(f"3714{(n * 4409) % 10**10:010d}")
    return f"{d[:4]} {d[4:10]} {d[10:]}"


def _iban(country, bban):
    rearranged = bban + country + "00"
    number = "".join(str(int(c, 36)) for c in rearranged)
    check = 98 - int(number) % 97
    return f"{country}{check:02d}{bban}"


def _grouped(iban):
    return " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))


def iban():
    """German IBAN, grouped: DE12 3704 0044 0532 0130 00."""
    n = _n()
    return _grouped(_iban("DE", f"37040044{(532013000 + n * 97) % 10**10:010d}"))


def iban_compact():
    n = _n()
    return _iban("IT", f"X0542811101{(123456 + n * 131) % 10**12:012d}")


def iban_es():
    n = _n()
    return _grouped(_iban("ES", f"21000418{(450200051332 + n * 53) % 10**12:012d}"))


def ipv4():
    n = _n()
    net = ["203.0.113", "198.51.100", "192.0.2"][(n // 100) % 3]
    return f"{net}.{100 + n % 100}"


def ipv6():
    n = _n()
    return f"2001:db8:{0x100 + n:x}::{0x1000 + n:x}"


def sk_openai():
    n = _n()
    return f"sk-proj-AtkCorp{n:03d}" + _hash("sk", n, ALNUM, 28)


def sk_anthropic():
    n = _n()
    return f"sk-ant-api03-AtkCorp{n:03d}" + _hash("ant", n, ALNUM, 40)


def akia():
    n = _n()
    return f"AKIAATKC{n:03d}" + _hash("akia", n, UPPER_DIGIT, 9)


def ghp():
    n = _n()
    return f"ghp_AtkCorp{n:03d}" + _hash("ghp", n, ALNUM, 26)


def github_pat():
    n = _n()
    return f"github_pat_AtkCorp{n:03d}_" + _hash("pat", n, ALNUM, 40)


def slack():
    n = _n()
    return f"xoxb-{1000 + n}-AtkCorp{n:03d}-" + _hash("xoxb", n, ALNUM, 20)


def stripe():
    n = _n()
    return f"sk_live_AtkCorp{n:03d}" + _hash("stripe", n, ALNUM, 20)


def hf():
    n = _n()
    return f"hf_AtkCorp{n:03d}" + _hash("hf", n, ALNUM, 28)


def jwt():
    n = _n()
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(
        json.dumps({"sub": f"AtkCorp-{n}", "iat": 1700000000 + n}).encode()
    ).decode().rstrip("=")
    return f"{header}.{payload}." + _hash("jwt", n, ALNUM + "-_", 43)


def pem():
    n = _n()
    body = "\n".join(_hash("pem", n * 10 + i, ALNUM + "+/", 64) for i in range(3))
    return f"-----BEGIN PRIVATE KEY-----\nMIIEvAtkCorp{n:03d}\n{body}\n-----END PRIVATE KEY-----"


# --- request builders -------------------------------------------------------

JSON_HEADERS = [["content-type", "application/json"]]
ANTHROPIC_HEADERS = [["content-type", "application/json"], ["anthropic-version", "2023-06-01"]]

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
    "generic-json": "/v1/embeddings",
    "plain-text": "/v1/notes",
    "headers": "/v1/chat/completions",
    "query": "/v1/chat/completions",
    "path": "/v1/chat/completions",
    "transport": "/v1/chat/completions",
    "more-providers": "/v1beta/models/gemini-2.5-flash:generateContent",
}

CLEAN = "Please summarise the attached notes in two lines."


def chat(**extra):
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": CLEAN}]}
    body.update(extra)
    return body


def chat_msgs(*messages, **extra):
    body = {"model": "gpt-4o", "messages": list(messages)}
    body.update(extra)
    return body


def resp(**extra):
    body = {"model": "gpt-4.1", "input": [{"role": "user", "content": CLEAN}]}
    body.update(extra)
    return body


def resp_items(*items, **extra):
    body = {"model": "gpt-4.1", "input": list(items) + [{"role": "user", "content": CLEAN}]}
    body.update(extra)
    return body


def anth(**extra):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 256,
            "messages": [{"role": "user", "content": CLEAN}]}
    body.update(extra)
    return body


def anth_blocks(*blocks, role="user", **extra):
    """The blocks in the last user message (or an assistant turn before it)."""
    if role == "user":
        messages = [{"role": "user", "content": list(blocks) + [{"type": "text", "text": CLEAN}]}]
    else:
        messages = [
            {"role": "user", "content": "Look it up."},
            {"role": role, "content": list(blocks)},
            {"role": "user", "content": CLEAN},
        ]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": messages}
    body.update(extra)
    return body


def anth_tool_result(content, **block_extra):
    """An assistant tool_use answered by a user tool_result holding `content`."""
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": content}
    result.update(block_extra)
    return {
        "model": "claude-sonnet-4-5", "max_tokens": 256,
        "messages": [
            {"role": "user", "content": "Look it up."},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"q": "notes"}}]},
            {"role": "user", "content": [result, {"type": "text", "text": CLEAN}]},
        ],
    }


def tool(description="Look a customer up.", parameters=None, name="lookup"):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": parameters or {"type": "object", "properties": {"q": {"type": "string"}}}}}


def resp_tool(description="Look a customer up.", parameters=None, name="lookup"):
    return {"type": "function", "name": name, "description": description,
            "parameters": parameters or {"type": "object", "properties": {"q": {"type": "string"}}}}


def anth_tool(description="Look a customer up.", schema=None, name="lookup"):
    return {"name": name, "description": description,
            "input_schema": schema or {"type": "object", "properties": {"q": {"type": "string"}}}}


def schema_with(field, value):
    prop = {"type": "string", "description": "recipient"}
    prop[field] = value
    return {"type": "object", "properties": {"to": prop}, "required": ["to"]}


# --- the corpus --------------------------------------------------------------

ATTACKS = []


def attack(id, category, description, body=None, values=(), path=None, method="POST",
           headers=None, transport="http1", trailers=None, chunks=None, body_encoding=None,
           pad_to=None, body_base64=None, http_version=None):
    assert values, id
    entry = {
        "id": id,
        "category": category,
        "description": description,
        "method": method,
        "path": path or PATHS[category],
        "headers": headers if headers is not None else (
            ANTHROPIC_HEADERS if category == "anthropic-messages" else JSON_HEADERS),
        "transport": transport,
        "values": list(values),
    }
    if body is not None:
        entry["body"] = body
    if body_base64 is not None:
        entry["body_base64"] = body_base64
    for key, value in [("trailers", trailers), ("chunks", chunks), ("body_encoding", body_encoding),
                       ("pad_to", pad_to), ("http_version", http_version)]:
        if value is not None:
            entry[key] = value
    ATTACKS.append(entry)


def raw(obj):
    """Compact JSON text (for bodies that then get edited as text)."""
    return json.dumps(obj, separators=(",", ":"))


def u_escape(text):
    """Every character as a \\uXXXX escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


def build():
    # ---------------------------------------------------------------- OpenAI Chat
    C = "openai-chat"
    v = email()
    attack("chat-control-user-content", C, "control: a value in the user message (masked today)",
           chat_msgs({"role": "user", "content": f"Write to {v} today."}), [v])
    v = phone()
    attack("chat-control-system-content", C, "control: a value in the system message",
           chat_msgs({"role": "system", "content": f"Escalations go to {v}."},
                     {"role": "user", "content": CLEAN}), [v])
    v = email()
    attack("chat-user", C, "the end-user id field `user` holds an e-mail", chat(user=v), [v])
    v = email()
    attack("chat-safety-identifier", C, "`safety_identifier` holds an e-mail", chat(safety_identifier=v), [v])
    v = email()
    attack("chat-prompt-cache-key", C, "`prompt_cache_key` holds an e-mail", chat(prompt_cache_key=f"user-{v}"), [v])
    v, w = email(), phone()
    attack("chat-metadata", C, "`metadata` values hold an e-mail and a phone",
           chat(store=True, metadata={"customer": v, "callback": w}), [v, w])
    v = email()
    attack("chat-metadata-key", C, "a `metadata` key is the value",
           chat(store=True, metadata={v: "vip"}), [v])
    v = email()
    attack("chat-tool-description", C, "a tool `description` names a person's e-mail",
           chat(tools=[tool(description=f"Send the report to {v} only.")]), [v])
    v = iban()
    attack("chat-tool-param-description", C, "a JSON-schema property `description` holds an IBAN",
           chat(tools=[tool(parameters={"type": "object", "properties": {
               "account": {"type": "string", "description": f"always {v}"}}})]), [v])
    v, w = email(), email()
    attack("chat-tool-param-enum", C, "a JSON-schema `enum` lists e-mails",
           chat(tools=[tool(parameters=schema_with("enum", [v, w]))]), [v, w])
    v = iban()
    attack("chat-tool-param-default", C, "a JSON-schema `default` is an IBAN",
           chat(tools=[tool(parameters=schema_with("default", v))]), [v])
    v = card()
    attack("chat-tool-param-examples", C, "JSON-schema `examples` hold a card number",
           chat(tools=[tool(parameters=schema_with("examples", [v]))]), [v])
    v = phone()
    attack("chat-tool-param-title", C, "a JSON-schema `title` is a phone number",
           chat(tools=[tool(parameters=schema_with("title", v))]), [v])
    v = sk_openai()
    attack("chat-tool-param-const", C, "a JSON-schema `const` is an API key",
           chat(tools=[tool(parameters=schema_with("const", v))]), [v])
    v = email()
    attack("chat-tool-param-pattern", C, "a JSON-schema `pattern` spells an e-mail",
           chat(tools=[tool(parameters=schema_with("pattern", f"^({v})$"))]), [v])
    v = email()
    attack("chat-tool-param-property-name", C, "a JSON-schema property name is the value",
           chat(tools=[tool(parameters={"type": "object", "properties": {v: {"type": "boolean"}}})]), [v])
    v = ghp()
    attack("chat-functions-legacy", C, "legacy `functions[].description` holds a token",
           chat(functions=[{"name": "deploy", "description": f"use token {v}",
                            "parameters": {"type": "object", "properties": {}}}]), [v])
    v = email()
    attack("chat-tool-choice-name", C, "`tool_choice.function.name` is a value",
           chat(tools=[tool()], tool_choice={"type": "function", "function": {"name": v}}), [v])
    v = email()
    attack("chat-prediction-content", C, "`prediction.content` (string) holds an e-mail",
           chat(prediction={"type": "content", "content": f"Dear customer,\ncontact {v}\n"}), [v])
    v = phone()
    attack("chat-prediction-parts", C, "`prediction.content` text parts hold a phone",
           chat(prediction={"type": "content", "content": [{"type": "text", "text": f"call {v}"}]}), [v])
    v, w = email(), iban()
    attack("chat-response-format-schema", C, "`response_format.json_schema` description/default hold values",
           chat(response_format={"type": "json_schema", "json_schema": {
               "name": "reply", "description": f"reply for {v}", "strict": True,
               "schema": {"type": "object", "properties": {"iban": {"type": "string", "default": w}}}}}),
           [v, w])
    v, w = email(), phone()
    attack("chat-stop-list", C, "`stop` sequences are values", chat(stop=[v, w]), [v, w])
    v = card()
    attack("chat-stop-string", C, "`stop` as one string is a card number", chat(stop=v), [v])
    v = card()
    attack("chat-logit-bias-key", C, "a `logit_bias` key is a card number", chat(logit_bias={v: -100}), [v])
    v = email()
    w = email()
    args = raw({"payload": raw({"to": v, "cc": [w]})})
    attack("chat-tool-arguments-json-twice", C, "tool-call `arguments` hold JSON whose string holds JSON with values",
           chat_msgs({"role": "user", "content": "Send it."},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "call_1", "type": "function", "function": {"name": "send", "arguments": args}}]},
                     {"role": "tool", "tool_call_id": "call_1", "content": "sent"},
                     {"role": "user", "content": CLEAN}), [v, w])
    v = email()
    attack("chat-tool-arguments-key", C, "a key inside tool-call `arguments` JSON is the value",
           chat_msgs({"role": "user", "content": "Send it."},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "call_2", "type": "function",
                          "function": {"name": "send", "arguments": raw({"recipients": {v: True}})}}]},
                     {"role": "tool", "tool_call_id": "call_2", "content": "sent"},
                     {"role": "user", "content": CLEAN}), [v])
    v = email()
    attack("chat-tool-call-id", C, "a `tool_call_id` / `tool_calls[].id` holds the value",
           chat_msgs({"role": "user", "content": "Send it."},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": f"call_{v}", "type": "function", "function": {"name": "send", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": f"call_{v}", "content": "sent"},
                     {"role": "user", "content": CLEAN}), [v])
    v = email()
    attack("chat-tool-call-function-name", C, "an assistant tool call's `function.name` is the value",
           chat_msgs({"role": "user", "content": "Send it."},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "call_3", "type": "function", "function": {"name": v, "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": "call_3", "content": "ok"},
                     {"role": "user", "content": CLEAN}), [v])
    v = email()
    attack("chat-message-name", C, "a message `name` (participant label) is an e-mail",
           chat_msgs({"role": "user", "name": v, "content": CLEAN}), [v])
    v = email()
    attack("chat-assistant-audio-id", C, "an assistant `audio.id` holds the value",
           chat_msgs({"role": "user", "content": "Say hi."},
                     {"role": "assistant", "audio": {"id": f"audio_{v}"}},
                     {"role": "user", "content": CLEAN}), [v])
    v = email()
    attack("chat-image-url-query", C, "an `image_url.url` carries the e-mail, percent-encoded, in its query",
           chat_msgs({"role": "user", "content": [
               {"type": "text", "text": CLEAN},
               {"type": "image_url", "image_url": {"url": "https://img.example.net/p.png?owner="
                                                          + v.replace("@", "%40")}}]}), [v])
    v = phone()
    attack("chat-image-data-url-not-base64", C, "a `data:` image URL whose data is a plain phone number",
           chat_msgs({"role": "user", "content": [
               {"type": "text", "text": CLEAN},
               {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{v}"}}]}), [v])
    v = email()
    attack("chat-input-audio-not-base64", C, "`input_audio.data` is plain text holding an e-mail",
           chat_msgs({"role": "user", "content": [
               {"type": "text", "text": CLEAN},
               {"type": "input_audio", "input_audio": {"data": f"transcript: write to {v}", "format": "wav"}}]}), [v])
    v, w = email(), iban()
    attack("chat-file-part", C, "a `file` part: `filename` is an e-mail, `file_data` plain text with an IBAN",
           chat_msgs({"role": "user", "content": [
               {"type": "text", "text": CLEAN},
               {"type": "file", "file": {"filename": f"{v}.pdf", "file_data": f"pay to {w}"}}]}), [v, w])
    v = email()
    attack("chat-unknown-part-type", C, "a content part of an unknown new type carries the value",
           chat_msgs({"role": "user", "content": [
               {"type": "text", "text": CLEAN},
               {"type": "x_contact_card", "x_contact_card": {"email": v}}]}), [v])
    v = email()
    attack("chat-part-extra-key", C, "a text part has an extra key whose name is the value",
           chat_msgs({"role": "user", "content": [{"type": "text", "text": CLEAN, v: 1}]}), [v])
    v = email()
    body = raw(chat()).replace('"content":"' + CLEAN + '"',
                               '"content":[{"type":"text","text":"' + CLEAN + '","type":"image_url",'
                               '"image_url":{"url":"https://img.example.net/a.png?u=' + v + '"}}]')
    attack("chat-repeated-type-key", C, "a part repeats `type` (text, then image_url) with the value in the URL",
           body, [v])
    v = email()
    attack("chat-root-key", C, "a top-level key is the value", chat(**{v: "ok"}), [v])
    v = email()
    attack("chat-deep-key", C, "the value as a key four levels down in an unknown field",
           chat(extra_context={"a": {"b": {"c": {v: True}}}}), [v])
    v, w = email(), phone()
    attack("chat-unknown-top-field", C, "an unknown top-level field holds values",
           chat(extra_context={"notes": [f"owner {v}", f"phone {w}"]}), [v, w])
    v = card()
    body = raw(chat()).rstrip("}") + ',"account":' + v + "}"
    attack("chat-number-card", C, "a card number as a JSON number", body, [v])
    v = phone_compact()
    body = raw(chat()).rstrip("}") + ',"callback":' + v.lstrip("+") + "}"
    attack("chat-number-phone", C, "a phone number without `+` as a JSON number", body, [v])
    v = email()
    body = raw(chat_msgs({"role": "user", "content": "Write to X today."})).replace(
        "X", v.replace("@", "\\u0040"))
    attack("chat-escape-at-content", C, "`\\u0040` for @ in the user message", body, [v])
    v = email()
    body = raw(chat(user="X")).replace('"user":"X"', '"user":"' + u_escape(v) + '"')
    attack("chat-escape-all-user", C, "`user` written entirely as \\u escapes", body, [v])
    v = phone_local_de()
    w = v.replace(" ", "/")  # 030/1234567 is a phone too
    body = raw(chat_msgs({"role": "user", "content": "Call X."})).replace("X", w.replace("/", "\\/"))
    attack("chat-escape-slash-content", C, "a `030/1234567` phone written with `\\/` in the user message",
           body, [w])
    v = email()
    attack("chat-developer-refusal", C, "control: values in a developer message and an assistant refusal",
           chat_msgs({"role": "developer", "content": f"Never email {v}."},
                     {"role": "assistant", "content": None, "refusal": f"I cannot contact {v}."},
                     {"role": "user", "content": CLEAN}), [v])
    v = ipv4()
    attack("chat-web-search-location", C, "`web_search_options.user_location` holds an IP",
           chat(web_search_options={"user_location": {"type": "approximate",
                                                      "approximate": {"city": f"Milano {v}"}}}), [v])
    v = email()
    attack("chat-audio-voice", C, "`audio.voice` and `modalities` carry a value",
           chat(modalities=["text", "audio"], audio={"voice": v, "format": "wav"}), [v])

    v = email()
    attack("chat-content-object", C, "a message `content` that is an object, not a string or parts",
           chat_msgs({"role": "user", "content": {"type": "text", "text": f"Write to {v}."}}), [v])
    v = email()
    attack("chat-arguments-object", C, "tool-call `arguments` as a JSON object instead of JSON text",
           chat_msgs({"role": "user", "content": "Send it."},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "call_4", "type": "function", "function": {"name": "send", "arguments": {"to": v}}}]},
                     {"role": "tool", "tool_call_id": "call_4", "content": "sent"},
                     {"role": "user", "content": CLEAN}), [v])

    # ---------------------------------------------------------------- OpenAI Responses
    R = "openai-responses"
    v = email()
    attack("resp-control-input-string", R, "control: a value in a plain string `input`",
           {"model": "gpt-4.1", "input": f"Write to {v}."}, [v])
    v = phone()
    attack("resp-control-instructions", R, "control: a value in `instructions`", resp(instructions=f"Escalate to {v}."), [v])
    v = email()
    attack("resp-user", R, "`user` holds an e-mail", resp(user=v), [v])
    v = email()
    attack("resp-safety-identifier", R, "`safety_identifier` holds an e-mail", resp(safety_identifier=v), [v])
    v = email()
    attack("resp-prompt-cache-key", R, "`prompt_cache_key` holds an e-mail", resp(prompt_cache_key=v), [v])
    v, w = email(), iban()
    attack("resp-metadata", R, "`metadata` values hold values", resp(metadata={"customer": v, "iban": w}), [v, w])
    v, w = email(), phone()
    attack("resp-prompt-variables", R, "prompt template `variables` are values",
           {"model": "gpt-4.1", "prompt": {"id": "pmpt_123", "version": "2",
                                           "variables": {"customer_email": v, "phone": w}}}, [v, w])
    v = email()
    attack("resp-prompt-variables-input-text", R, "a prompt variable as an `input_text` part",
           {"model": "gpt-4.1", "prompt": {"id": "pmpt_124",
                                           "variables": {"note": {"type": "input_text", "text": f"from {v}"}}}}, [v])
    v = email()
    attack("resp-previous-response-id", R, "`previous_response_id` holds the value",
           resp(previous_response_id=f"resp_{v}"), [v])
    v = email()
    attack("resp-conversation-id", R, "`conversation` (object id) holds the value",
           resp(conversation={"id": f"conv_{v}"}), [v])
    v = email()
    attack("resp-item-id", R, "an input item's `id` holds the value",
           resp_items({"type": "message", "id": f"msg_{v}", "role": "assistant",
                       "content": [{"type": "output_text", "text": "Done."}]}), [v])
    v = email()
    attack("resp-control-function-call-output", R, "control: `function_call_output.output` string",
           resp_items({"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1", "output": f"owner is {v}"}), [v])
    v, w = email(), email()
    attack("resp-function-call-arguments-json-twice", R, "`function_call.arguments` JSON holding JSON with values",
           resp_items({"type": "function_call", "call_id": "c2", "name": "send",
                       "arguments": raw({"envelope": raw({"to": v, "bcc": w})})},
                      {"type": "function_call_output", "call_id": "c2", "output": "sent"}), [v, w])
    v = email()
    attack("resp-function-call-output-unknown-part", R, "a `function_call_output` part of an unknown type",
           resp_items({"type": "function_call", "call_id": "c3", "name": "lookup", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c3",
                       "output": [{"type": "input_file", "filename": f"{v}.csv", "file_data": "x"}]}), [v])
    v, w = email(), phone()
    attack("resp-mcp-call", R, "an `mcp_call` item's `arguments` and `output` hold values",
           resp_items({"type": "mcp_call", "id": "mcp_1", "server_label": "crm", "name": "find",
                       "arguments": raw({"email": v}), "output": f"found, phone {w}"}), [v, w])
    v = email()
    attack("resp-mcp-list-tools", R, "an `mcp_list_tools` item's tool description and schema",
           resp_items({"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "crm", "tools": [
               {"name": "find", "description": f"admin is {v}", "input_schema": {"type": "object"}}]}), [v])
    v = email()
    attack("resp-mcp-approval-request", R, "an `mcp_approval_request` item's arguments",
           resp_items({"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "crm",
                       "name": "delete", "arguments": raw({"who": v})}), [v])
    v, w = email(), ghp()
    attack("resp-shell-call-output", R, "a `shell_call_output` item's stdout/stderr",
           resp_items({"type": "shell_call", "call_id": "sh1", "action": {"commands": ["cat users.txt"]}},
                      {"type": "shell_call_output", "call_id": "sh1", "output": [
                          {"stdout": f"user {v}\n", "stderr": f"token {w}\n",
                           "outcome": {"type": "exit", "exit_code": 0}}]}), [v, w])
    v = sk_openai()
    attack("resp-shell-call-commands", R, "a `shell_call` item's commands carry a key",
           resp_items({"type": "shell_call", "call_id": "sh2",
                       "action": {"commands": [f"export OPENAI_API_KEY={v}"]}},
                      {"type": "shell_call_output", "call_id": "sh2", "output": []}), [v])
    v = email()
    attack("resp-local-shell-output", R, "a `local_shell_call_output` item's output",
           resp_items({"type": "local_shell_call", "id": "ls1", "call_id": "ls1",
                       "action": {"type": "exec", "command": ["whoami"], "env": {}}},
                      {"type": "local_shell_call_output", "id": "ls1", "output": f"{v}\n"}), [v])
    v, w = akia(), email()
    attack("resp-local-shell-action", R, "a `local_shell_call` command and env carry values",
           resp_items({"type": "local_shell_call", "id": "ls2", "call_id": "ls2",
                       "action": {"type": "exec", "command": ["mail", w], "env": {"AWS_ACCESS_KEY_ID": v}}},
                      {"type": "local_shell_call_output", "id": "ls2", "output": "ok"}), [v, w])
    v, w = email(), card()
    attack("resp-code-interpreter", R, "a `code_interpreter_call`'s code and `logs` output",
           resp_items({"type": "code_interpreter_call", "id": "ci1", "container_id": "cntr_1",
                       "code": f"send('{v}')", "outputs": [{"type": "logs", "logs": f"charged {w}"}]}), [v, w])
    v = email()
    attack("resp-control-reasoning-summary", R, "control: a `reasoning` item's summary text",
           resp_items({"type": "reasoning", "id": "rs1",
                       "summary": [{"type": "summary_text", "text": f"User is {v}."}]}), [v])
    v = email()
    attack("resp-reasoning-content", R, "a `reasoning` item's `content` reasoning_text",
           resp_items({"type": "reasoning", "id": "rs2", "summary": [],
                       "content": [{"type": "reasoning_text", "text": f"I will write to {v}."}]}), [v])
    v = email()
    attack("resp-reasoning-encrypted-plain", R, "`encrypted_content` holding plain text",
           resp_items({"type": "reasoning", "id": "rs3", "summary": [],
                       "encrypted_content": f"plain: the user is {v}"}), [v])
    v, w, x = email(), email(), iban()
    attack("resp-file-search-call", R, "a `file_search_call`'s queries and results (text, filename, attributes)",
           resp_items({"type": "file_search_call", "id": "fs1", "status": "completed", "queries": [f"mail of {v}"],
                       "results": [{"file_id": "file_1", "filename": "crm.txt", "score": 0.9,
                                    "text": f"contact {w}", "attributes": {"iban": x}}]}), [v, w, x])
    v = email()
    attack("resp-web-search-call-query", R, "a `web_search_call` action query",
           resp_items({"type": "web_search_call", "id": "ws1", "status": "completed",
                       "action": {"type": "search", "query": f"who is {v}"}}), [v])
    v = email()
    attack("resp-web-search-open-page", R, "a `web_search_call` open_page URL with the value in its query",
           resp_items({"type": "web_search_call", "id": "ws2", "status": "completed",
                       "action": {"type": "open_page", "url": f"https://crm.example.net/find?e={v}"}}), [v])
    v = email()
    attack("resp-computer-call-output", R, "a `computer_call_output` screenshot URL that is not an image",
           resp_items({"type": "computer_call", "id": "cu1", "call_id": "cu1", "action": {"type": "screenshot"},
                       "pending_safety_checks": []},
                      {"type": "computer_call_output", "call_id": "cu1",
                       "output": {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{v}"}}), [v])
    v = email()
    attack("resp-image-generation-call", R, "an `image_generation_call` result that is plain text",
           resp_items({"type": "image_generation_call", "id": "ig1", "status": "completed",
                       "result": f"not an image: {v}"}), [v])
    v = email()
    attack("resp-control-custom-tool-call", R, "control: a `custom_tool_call.input`",
           resp_items({"type": "custom_tool_call", "call_id": "ct1", "name": "sql", "input": f"SELECT * WHERE e='{v}'"},
                      {"type": "custom_tool_call_output", "call_id": "ct1", "output": "1 row"}), [v])
    v = email()
    attack("resp-tool-description", R, "a function tool `description` holds an e-mail",
           resp(tools=[resp_tool(description=f"Reports go to {v}.")]), [v])
    v, w = email(), iban()
    attack("resp-tool-schema-enum-default", R, "a tool schema `enum` and `default` are values",
           resp(tools=[resp_tool(parameters={"type": "object", "properties": {
               "to": {"type": "string", "enum": [v]}, "iban": {"type": "string", "default": w}}})]), [v, w])
    v = phone()
    attack("resp-tool-schema-examples-title", R, "a tool schema `examples`/`title`",
           resp(tools=[resp_tool(parameters={"type": "object", "title": v, "properties": {
               "n": {"type": "string", "examples": [v]}}})]), [v])
    v = email()
    attack("resp-mcp-tool-definition", R, "an `mcp` tool's server_url and headers carry values",
           resp(tools=[{"type": "mcp", "server_label": "crm", "server_url": f"https://mcp.example.net/?user={v}",
                        "headers": {"X-User": v}, "require_approval": "never"}]), [v])
    v, w = email(), card()
    attack("resp-text-format-schema", R, "`text.format` json_schema description/default",
           resp(text={"format": {"type": "json_schema", "name": "r", "description": f"for {v}",
                                 "schema": {"type": "object", "properties": {
                                     "card": {"type": "string", "default": w}}}}}), [v, w])
    v = email()
    attack("resp-input-image-url-query", R, "an `input_image.image_url` with the value percent-encoded in its query",
           {"model": "gpt-4.1", "input": [{"role": "user", "content": [
               {"type": "input_text", "text": CLEAN},
               {"type": "input_image", "image_url": "https://img.example.net/x.png?who=" + v.replace("@", "%40")}]}]},
           [v])
    v = phone()
    attack("resp-input-image-not-base64", R, "an `input_image` data URL whose data is a phone",
           {"model": "gpt-4.1", "input": [{"role": "user", "content": [
               {"type": "input_text", "text": CLEAN},
               {"type": "input_image", "image_url": f"data:image/jpeg;base64,{v}"}]}]}, [v])
    v, w = email(), email()
    attack("resp-input-file", R, "an `input_file` with value `filename` and plain-text `file_data`",
           {"model": "gpt-4.1", "input": [{"role": "user", "content": [
               {"type": "input_text", "text": CLEAN},
               {"type": "input_file", "filename": f"{v}.txt", "file_data": f"from {w}"}]}]}, [v, w])
    v = email()
    attack("resp-unknown-item-type", R, "an input item of an unknown new type",
           resp_items({"type": "x_memory", "id": "mem1", "memory": {"owner": v}}), [v])
    v = email()
    attack("resp-compaction-item", R, "a `compaction` item whose encrypted_content is plain text",
           resp_items({"type": "compaction", "id": "cmp1", "encrypted_content": f"summary: {v}"}), [v])
    v = email()
    attack("resp-item-key", R, "a message item has an extra key that is the value",
           {"model": "gpt-4.1", "input": [{"role": "user", "content": CLEAN, v: True}]}, [v])
    v, w = email(), email()
    attack("resp-annotations", R, "an assistant `output_text`'s url_citation annotation (url, title)",
           resp_items({"type": "message", "role": "assistant", "content": [
               {"type": "output_text", "text": "See the source.", "annotations": [
                   {"type": "url_citation", "url": f"https://crm.example.net/?e={v}", "title": w,
                    "start_index": 0, "end_index": 3}]}]}), [v, w])
    v = email()
    body = raw({"model": "gpt-4.1", "input": "Write to X."}).replace("X", v.replace("@", "\\u0040"))
    attack("resp-escape-input", R, "`\\u0040` for @ in a string `input`", body, [v])
    v = email()
    attack("resp-tool-choice-allowed", R, "`tool_choice` allowed_tools names a value",
           resp(tools=[resp_tool()], tool_choice={"type": "allowed_tools", "mode": "auto",
                                                  "tools": [{"type": "function", "name": v}]}), [v])
    v = card()
    body = raw(resp()).rstrip("}") + ',"max_output_tokens":256,"x_account":' + v + "}"
    attack("resp-number-card", R, "a card number as a JSON number in an unknown field", body, [v])

    v = email()
    attack("resp-function-call-output-object", R, "a `function_call_output.output` that is an object",
           resp_items({"type": "function_call", "call_id": "c4", "name": "lookup", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c4", "output": {"owner": v}}), [v])
    v = email()
    attack("resp-function-call-arguments-object", R, "`function_call.arguments` as a JSON object",
           resp_items({"type": "function_call", "call_id": "c5", "name": "send", "arguments": {"to": v}},
                      {"type": "function_call_output", "call_id": "c5", "output": "sent"}), [v])

    # ---------------------------------------------------------------- Anthropic Messages
    A = "anthropic-messages"
    v = email()
    attack("anth-control-text", A, "control: a value in a user text block",
           anth_blocks({"type": "text", "text": f"Write to {v}."}), [v])
    v = phone()
    attack("anth-control-system-string", A, "control: a value in a string `system`", anth(system=f"Escalate to {v}."), [v])
    v = email()
    attack("anth-control-system-blocks", A, "control: a value in `system` text blocks",
           anth(system=[{"type": "text", "text": f"Owner: {v}", "cache_control": {"type": "ephemeral"}}]), [v])
    v = email()
    attack("anth-system-block-citations", A, "a `system` block's extra field carries the value",
           anth(system=[{"type": "text", "text": "Be brief.", "x_owner": v}]), [v])
    v = email()
    attack("anth-metadata-user-id", A, "`metadata.user_id` is an e-mail", anth(metadata={"user_id": v}), [v])
    v = email()
    attack("anth-tool-description", A, "a tool `description` holds an e-mail",
           anth(tools=[anth_tool(description=f"Send reports to {v}.")]), [v])
    v, w = email(), iban()
    attack("anth-tool-schema-enum-default", A, "a tool `input_schema` enum/default",
           anth(tools=[anth_tool(schema={"type": "object", "properties": {
               "to": {"type": "string", "enum": [v]}, "iban": {"type": "string", "default": w}}})]), [v, w])
    v, w = phone(), card()
    attack("anth-tool-schema-examples-title-const", A, "a tool `input_schema` examples/title/const",
           anth(tools=[anth_tool(schema={"type": "object", "title": v, "properties": {
               "card": {"type": "string", "const": w, "examples": [w]}}})]), [v, w])
    v = email()
    attack("anth-tool-schema-pattern", A, "a tool `input_schema` pattern spells an e-mail",
           anth(tools=[anth_tool(schema=schema_with("pattern", f"^{v}$"))]), [v])
    v = email()
    attack("anth-tool-choice-name", A, "`tool_choice.name` is the value",
           anth(tools=[anth_tool()], tool_choice={"type": "tool", "name": v}), [v])
    v, w = email(), phone()
    attack("anth-control-tool-use-input-deep", A, "control: strings deep inside `tool_use.input`",
           anth_blocks({"type": "tool_use", "id": "toolu_a", "name": "crm",
                        "input": {"a": {"b": [{"c": {"d": [f"to {v}", {"e": w}]}}]}}}, role="assistant"), [v, w])
    v = email()
    attack("anth-tool-use-input-key", A, "a key deep inside `tool_use.input` is the value",
           anth_blocks({"type": "tool_use", "id": "toolu_b", "name": "crm",
                        "input": {"a": {"b": {v: "primary"}}}}, role="assistant"), [v])
    v = card()
    body = raw(anth_blocks({"type": "tool_use", "id": "toolu_c", "name": "pay", "input": {"card": "X"}},
                           role="assistant")).replace('"card":"X"', '"card":' + v)
    attack("anth-tool-use-input-number", A, "a card number as a JSON number in `tool_use.input`", body, [v])
    v = email()
    attack("anth-tool-use-id", A, "`tool_use.id` / `tool_result.tool_use_id` hold the value",
           {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": [
               {"role": "user", "content": "Look it up."},
               {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{v}", "name": "lookup",
                                                  "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{v}", "content": "ok"}]}]},
           [v])
    v = email()
    attack("anth-tool-use-name", A, "a `tool_use.name` is the value",
           anth_blocks({"type": "tool_use", "id": "toolu_d", "name": v, "input": {}}, role="assistant"), [v])
    v = email()
    attack("anth-control-tool-result-string", A, "control: a string `tool_result.content`",
           anth_tool_result(f"owner {v}"), [v])
    v = email()
    attack("anth-control-tool-result-text", A, "control: `tool_result` text blocks",
           anth_tool_result([{"type": "text", "text": f"owner {v}"}]), [v])
    v, w, x = email(), email(), phone()
    attack("anth-tool-result-search-result", A, "a `search_result` inside a `tool_result` (source, title, content)",
           anth_tool_result([{"type": "search_result", "source": f"https://crm.example.net/?e={v}", "title": w,
                              "content": [{"type": "text", "text": f"call {x}"}], "citations": {"enabled": True}}]),
           [v, w, x])
    v, w = email(), email()
    attack("anth-search-result-block", A, "a top-level `search_result` block in the user turn",
           anth_blocks({"type": "search_result", "source": "https://kb.example.net/1", "title": f"about {v}",
                        "content": [{"type": "text", "text": f"contact {w}"}]}), [v, w])
    v = email()
    attack("anth-tool-result-document-text", A, "a `document` (text source) inside a `tool_result`",
           anth_tool_result([{"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                             "data": f"memo for {v}"}}]), [v])
    v = email()
    attack("anth-document-content-source", A, "a `document` whose source is `content` blocks",
           anth_blocks({"type": "document", "source": {"type": "content", "content": [
               {"type": "text", "text": f"memo for {v}"}]}}), [v])
    v, w = email(), email()
    attack("anth-document-title-context", A, "a `document`'s `title` and `context` hold values",
           anth_blocks({"type": "document", "title": f"memo for {v}", "context": f"from {w}",
                        "source": {"type": "text", "media_type": "text/plain", "data": "Quarterly figures."}}), [v, w])
    v = email()
    attack("anth-control-document-text", A, "control: a `document` text source's data",
           anth_blocks({"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                       "data": f"memo for {v}"}}), [v])
    v = email()
    attack("anth-document-pdf-not-base64", A, "a base64 PDF `document` whose data is plain text",
           anth_blocks({"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                       "data": f"plain text, not a PDF: {v}"}}), [v])
    v = iban()
    attack("anth-image-not-base64", A, "a base64 `image` whose data is an IBAN, not an image",
           anth_blocks({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": v}}), [v])
    v = email()
    attack("anth-image-url-query", A, "an `image` url source with the value percent-encoded in its query",
           anth_blocks({"type": "image", "source": {"type": "url",
                                                    "url": "https://img.example.net/a.png?u=" + v.replace("@", "%40")}}),
           [v])
    v = phone()
    attack("anth-tool-result-image", A, "an `image` in a `tool_result` whose data is a phone",
           anth_tool_result([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": v}}]),
           [v])
    v, w = email(), email()
    attack("anth-web-fetch-result", A, "a `web_fetch_tool_result` (url, document data, title)",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch",
                        "input": {"url": "https://kb.example.net/p"}},
                       {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {
                           "type": "web_fetch_result", "url": f"https://kb.example.net/p?e={v}",
                           "content": {"type": "document", "title": "page",
                                       "source": {"type": "text", "media_type": "text/plain",
                                                  "data": f"contact {w}"}}}}, role="assistant"), [v, w])
    v, w = email(), email()
    attack("anth-web-search-result", A, "a `web_search_tool_result` (title, encrypted_content in plain text)",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search",
                        "input": {"query": "company"}},
                       {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": [
                           {"type": "web_search_result", "url": "https://kb.example.net/q", "title": f"about {v}",
                            "encrypted_content": f"plain {w}", "page_age": "1 day"}]}, role="assistant"), [v, w])
    v, w = email(), sk_anthropic()
    attack("anth-code-execution-result", A, "a `code_execution_tool_result` stdout/stderr",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_3", "name": "code_execution",
                        "input": {"code": "print(1)"}},
                       {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_3", "content": {
                           "type": "code_execution_result", "stdout": f"{v}\n", "stderr": f"key {w}",
                           "return_code": 0, "content": []}}, role="assistant"), [v, w])
    v = email()
    attack("anth-bash-code-execution-result", A, "a `bash_code_execution_tool_result` stdout",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_4", "name": "bash_code_execution",
                        "input": {"command": "cat users"}},
                       {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_4", "content": {
                           "type": "bash_code_execution_result", "stdout": f"{v}\n", "stderr": "",
                           "return_code": 0, "content": []}}, role="assistant"), [v])
    v = iban()
    attack("anth-text-editor-result", A, "a `text_editor_code_execution_tool_result` view content",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_5", "name": "text_editor_code_execution",
                        "input": {"command": "view", "path": "/tmp/a"}},
                       {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_5", "content": {
                           "type": "text_editor_code_execution_view_result", "file_type": "text",
                           "content": f"iban {v}"}}, role="assistant"), [v])
    v = email()
    attack("anth-mcp-tool-use", A, "an `mcp_tool_use` block's input",
           anth_blocks({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "find", "server_name": "crm",
                        "input": {"email": v}}, role="assistant"), [v])
    v = phone()
    attack("anth-mcp-tool-result", A, "an `mcp_tool_result` block's text content",
           anth_blocks({"type": "mcp_tool_use", "id": "mcptoolu_2", "name": "find", "server_name": "crm",
                        "input": {}},
                       {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_2", "is_error": False,
                        "content": [{"type": "text", "text": f"phone {v}"}]}, role="assistant"), [v])
    v = email()
    attack("anth-container-upload", A, "a `container_upload` block's file_id holds the value",
           anth_blocks({"type": "container_upload", "file_id": f"file_{v}"}), [v])
    v = email()
    attack("anth-control-server-tool-use-input", A, "control: `server_tool_use.input`",
           anth_blocks({"type": "server_tool_use", "id": "srvtoolu_6", "name": "web_search",
                        "input": {"query": f"who is {v}"}}, role="assistant"), [v])
    v, w = email(), email()
    attack("anth-citations-char-location", A, "a text block's char_location citation (cited_text, document_title)",
           anth_blocks({"type": "text", "text": "As stated.", "citations": [
               {"type": "char_location", "cited_text": f"write to {v}", "document_index": 0,
                "document_title": w, "start_char_index": 0, "end_char_index": 10}]}, role="assistant"), [v, w])
    v, w = email(), email()
    attack("anth-citations-search-result", A, "a search_result_location citation (cited_text, source, title)",
           anth_blocks({"type": "text", "text": "As found.", "citations": [
               {"type": "search_result_location", "cited_text": f"mail {v}",
                "source": "https://kb.example.net/1", "title": w, "search_result_index": 0,
                "start_block_index": 0, "end_block_index": 0}]}, role="assistant"), [v, w])
    v = email()
    attack("anth-citations-web-search", A, "a web_search_result_location citation (url, title, cited_text)",
           anth_blocks({"type": "text", "text": "Per the web.", "citations": [
               {"type": "web_search_result_location", "url": f"https://kb.example.net/?e={v}",
                "title": "page", "encrypted_index": "Eo8B", "cited_text": "text"}]}, role="assistant"), [v])
    v = email()
    attack("anth-thinking-text", A, "a `thinking` block's text holds the value (forged signature)",
           anth_blocks({"type": "thinking", "thinking": f"The user is {v}; I will write.",
                        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}, {"type": "text", "text": "Done."},
                       role="assistant"), [v])
    v = email()
    attack("anth-thinking-signature", A, "a `thinking` block's `signature` holds the value",
           anth_blocks({"type": "thinking", "thinking": "Let me check.", "signature": f"sig {v}"},
                       {"type": "text", "text": "Done."}, role="assistant"), [v])
    v = email()
    attack("anth-redacted-thinking-plain", A, "`redacted_thinking.data` holding plain text",
           anth_blocks({"type": "redacted_thinking", "data": f"plain: write to {v}"},
                       {"type": "text", "text": "Done."}, role="assistant"), [v])
    v = email()
    body = raw(anth_blocks({"type": "text", "text": "Done."}, role="assistant")).replace(
        '[{"type":"text","text":"Done."}]',
        '[{"type":"thinking","thinking":"The user is ' + v + '","type":"text","text":"Done.","signature":"x"}]')
    attack("anth-control-thinking-repeated-type", A, "control: a block typed both `thinking` and `text`", body, [v])
    v = email()
    body = raw(anth_blocks({"type": "text", "text": CLEAN})).replace(
        '{"type":"text","text":"' + CLEAN + '"}',
        '{"type":"text","text":"hi","type":"image","source":{"type":"url","url":"https://img.example.net/?u=' + v + '"}}', 1)
    attack("anth-repeated-type-key", A, "a block repeats `type` (text, then image) with the value in its URL", body, [v])
    v = email()
    attack("anth-unknown-block-type", A, "a content block of an unknown new type",
           anth_blocks({"type": "x_contact", "contact": {"email": v}}), [v])
    v = email()
    attack("anth-root-key", A, "a top-level key is the value", anth(**{v: 1}), [v])
    v, w = email(), phone()
    attack("anth-stop-sequences", A, "`stop_sequences` are values", anth(stop_sequences=[v, w]), [v, w])
    v, w = sk_openai(), email()
    attack("anth-mcp-servers", A, "`mcp_servers` url and authorization_token",
           anth(mcp_servers=[{"type": "url", "url": f"https://mcp.example.net/?owner={w}", "name": "crm",
                              "authorization_token": v}]), [v, w])
    v = email()
    attack("anth-container-id", A, "`container` holds the value", anth(container=f"container_{v}"), [v])
    v = email()
    body = raw(anth_blocks({"type": "text", "text": "Write to X."})).replace("X", v.replace("@", "\\u0040"))
    attack("anth-escape-at-text", A, "`\\u0040` for @ in a text block", body, [v])
    v = email()
    attack("anth-tool-result-json-string", A, "a `tool_result` string holding JSON whose key is the value",
           anth_tool_result(raw({"rows": [{v: "vip"}]})), [v])
    v, w = email(), email()
    attack("anth-batches", A, "`/v1/messages/batches`: values in `requests[].params` (system, messages)",
           {"requests": [{"custom_id": "r1", "params": {
               "model": "claude-sonnet-4-5", "max_tokens": 64, "system": f"Owner {v}",
               "messages": [{"role": "user", "content": f"Write to {w}."}]}}]}, [v, w],
           path="/v1/messages/batches")
    v = email()
    attack("anth-count-tokens-tool", A, "`/v1/messages/count_tokens` with a value in a tool description",
           {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": CLEAN}],
            "tools": [anth_tool(description=f"Mail {v}")]}, [v], path="/v1/messages/count_tokens")
    v = email()
    attack("anth-control-count-tokens-text", A, "control: `/v1/messages/count_tokens` with a value in the text",
           {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": f"Write to {v}."}]}, [v],
           path="/v1/messages/count_tokens")

    v = email()
    attack("anth-tool-result-nested-tool-use", A, "a `tool_use` block inside a `tool_result`, the value in its input",
           anth_tool_result([{"type": "tool_use", "id": "toolu_n", "name": "crm", "input": {"q": v}}]), [v])
    v = email()
    attack("anth-tool-result-nested-tool-result", A, "a `tool_result` inside a `tool_result`",
           anth_tool_result([{"type": "tool_result", "tool_use_id": "toolu_m", "content": f"owner {v}"}]), [v])
    v = email()
    attack("anth-tool-result-document-content", A, "a `document` with a `content` source inside a `tool_result`",
           anth_tool_result([{"type": "document", "source": {"type": "content", "content": [
               {"type": "text", "text": f"memo for {v}"}]}}]), [v])
    v = email()
    attack("anth-tool-result-unknown-block", A, "a block of an unknown type inside a `tool_result`",
           anth_tool_result([{"type": "x_row", "row": {"email": v}}]), [v])

    # ---------------------------------------------------------------- generic JSON
    G = "generic-json"
    v = email()
    attack("json-control-embeddings", G, "control: `/v1/embeddings` input string", {"model": "e", "input": f"mail {v}"}, [v])
    v = email()
    attack("json-embeddings-key", G, "`/v1/embeddings`: an object key is the value",
           {"model": "e", "input": "x", "labels": {v: 1}}, [v])
    v = card()
    body = '{"model":"e","input":"x","user":' + v + "}"
    attack("json-number-card", G, "a card number as a JSON number", body, [v])
    v = card()
    body = '{"model":"e","input":"x","amount":' + v[:1] + "." + v[1:] + "e15}"
    attack("json-number-card-exponent", G, "a card number as a JSON number in exponent form", body, [v])
    v = email()
    inner = raw({"a": raw({"b": "X"})}).replace("X", v.replace("@", "\\\\u0040"))
    attack("json-nested-escape", G, "JSON in a string in a string, the @ written `\\u0040` at the inner level",
           {"model": "e", "input": inner}, [v])
    v = email()
    attack("json-nested-twice", G, "JSON in a string in a string", {"model": "e", "input": raw({"a": raw({"b": v})})}, [v])
    v = email()
    body = '{"model":"e","input":"x","' + u_escape(v) + '":1}'
    attack("json-escaped-key", G, "an object key that is the value written as \\u escapes", body, [v])
    v = email()
    attack("json-moderations", G, "control: `/v1/moderations` text parts",
           {"model": "omni-moderation-latest", "input": [{"type": "text", "text": f"mail {v}"}]}, [v],
           path="/v1/moderations")
    v, w = email(), email()
    attack("json-batches-keys", G, "`/v1/batches` metadata with values as keys and values",
           {"input_file_id": "file-1", "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "metadata": {v: w}}, [v, w], path="/v1/batches")
    v = email()
    attack("json-vector-store-search", G, "control: `/v1/vector_stores/…/search` query",
           {"query": f"who is {v}", "max_num_results": 3}, [v], path="/v1/vector_stores/vs_1/search")
    v = email()
    attack("json-root-array-key", G, "a root array whose object key is the value", [{"input": "x", v: True}], [v])
    v = email()
    attack("json-control-root-array", G, "control: a root array of strings", [f"mail {v}", "x"], [v])
    v = email()
    attack("json-control-root-string", G, "control: a root JSON string", f"mail {v}", [v],
           path="/v1/chat/completions")
    v = card()
    attack("json-root-number", G, "a root JSON number that is a card number", v, [v], path="/v1/chat/completions")
    v = email()
    attack("json-empty-key", G, "an empty key whose value is an e-mail, beside empty strings",
           {"model": "e", "input": "", "": v, "x": ""}, [v])
    v = email()
    attack("json-empty-value-key", G, "the value as a key whose value is empty", {"model": "e", "input": "", v: ""}, [v])
    v = email()
    body = '{"model":"e","input":"' + v + '","input":"x"}'
    attack("json-duplicate-keys", G, "a repeated key: the value in the first occurrence", body, [v])
    v = email()
    deep = {"leaf": v}
    for _ in range(60):
        deep = {"n": deep}
    attack("json-deep-nesting", G, "a value 60 objects deep", {"model": "e", "input": deep}, [v])
    v = email()
    attack("json-bom", G, "a UTF-8 byte-order mark before the JSON",
           "\ufeff" + raw({"model": "e", "input": f"mail {v}"}), [v])
    v = email()
    attack("json-trailing-garbage", G, "valid JSON followed by text with a value",
           raw({"model": "e", "input": "x"}) + f" mail {v}", [v])
    v = email()
    attack("json-completions-prompt", G, "legacy `/v1/completions` prompt",
           {"model": "gpt-3.5-turbo-instruct", "prompt": [f"Mail {v}"]}, [v], path="/v1/completions")
    v = email()
    attack("json-chat-completion-update", G, "`POST /v1/chat/completions/{id}` (update metadata)",
           {"metadata": {"owner": v}}, [v], path="/v1/chat/completions/chatcmpl-123")
    v = email()
    attack("json-responses-compact", G, "`/v1/responses/compact`-style sub-path with a value in metadata",
           {"model": "gpt-4.1", "input": "x", "metadata": {"owner": v}}, [v], path="/v1/responses/compact")
    v = sk_openai()
    attack("json-pem-and-key", G, "a secret in an unknown field of a generic body", {"config": {"key": v}}, [v],
           path="/v1/assistants")
    v = pem()
    attack("json-pem-block", G, "a PEM private key in a generic body", {"config": {"key": v}}, [v],
           path="/v1/assistants")

    # ---------------------------------------------------------------- plain text bodies
    T = "plain-text"
    v = email()
    attack("text-plain-generic", T, "a text/plain body with an e-mail to an unrouted path",
           f"Contact {v} tomorrow.", [v], headers=[["content-type", "text/plain"]])
    v = email()
    attack("text-plain-to-chat", T, "a text/plain body to /v1/chat/completions",
           f"Contact {v} tomorrow.", [v], path="/v1/chat/completions", headers=[["content-type", "text/plain"]])
    v = email()
    attack("text-json-declared-plain", T, "JSON sent as text/plain to chat: a value in `metadata`",
           chat(metadata={"owner": v}), [v], path="/v1/chat/completions",
           headers=[["content-type", "text/plain"]])
    v = email()
    attack("text-plain-declared-json", T, "plain text declared application/json",
           f"Contact {v} tomorrow.", [v], headers=JSON_HEADERS)
    v, w = email(), phone()
    attack("text-form-urlencoded", T, "a form-urlencoded body",
           "email=" + v.replace("@", "%40") + "&phone=" + w.replace("+", "%2B").replace(" ", "+"), [v, w],
           path="/v1/forms", headers=[["content-type", "application/x-www-form-urlencoded"]])
    v = email()
    boundary = "atkboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nassistants\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\nowner {v}\r\n--{boundary}--\r\n")
    attack("text-multipart-upload", T, "a multipart/form-data file upload to /v1/files", body, [v],
           path="/v1/files", headers=[["content-type", f"multipart/form-data; boundary={boundary}"]])
    v, w = email(), email()
    attack("text-ndjson", T, "JSON lines (a batch input file) body",
           raw({"custom_id": "1", "body": {"input": v}}) + "\n" + raw({"custom_id": "2", "body": {"input": w}}) + "\n",
           [v, w], path="/v1/uploads", headers=[["content-type", "application/x-ndjson"]])
    v = iban()
    attack("text-csv", T, "a CSV body", f"name,iban\nclient,{v}\n", [v], path="/v1/uploads",
           headers=[["content-type", "text/csv"]])
    v = email()
    attack("text-utf16", T, "a JSON body in UTF-16LE with a BOM, an e-mail in the user text",
           None, [v], headers=[["content-type", "application/json; charset=utf-16"]],
           body_base64=base64.b64encode(("\ufeff" + raw(chat_msgs(
               {"role": "user", "content": f"Write to {v}."}))).encode("utf-16-le")).decode())
    v = email()
    attack("text-latin1", T, "a latin-1 (not UTF-8) JSON body, an e-mail in the user text",
           None, [v], path="/v1/chat/completions",
           headers=[["content-type", "application/json; charset=iso-8859-1"]],
           body_base64=base64.b64encode(json.dumps(chat_msgs(
               {"role": "user", "content": f"Andr\u00e9 writes to {v}."}), ensure_ascii=False).encode("latin-1")).decode())
    v = email()
    attack("text-get-with-body", T, "a GET with a text body", f"mail {v}", [v], method="GET", path="/v1/models",
           headers=[["content-type", "text/plain"]])
    v = email()
    attack("text-sse-shaped", T, "an SSE-shaped (text/event-stream) request body",
           f"data: {{\"text\": \"mail {v}\"}}\n\n", [v], path="/v1/realtime/events",
           headers=[["content-type", "text/event-stream"]])

    # ---------------------------------------------------------------- request headers
    H = "headers"
    v = email()
    attack("hdr-x-user-email", H, "a custom `x-user-email` header", chat(), [v], headers=JSON_HEADERS + [["x-user-email", v]])
    v = ipv4()
    attack("hdr-x-forwarded-for", H, "`x-forwarded-for` with a client IP", chat(), [v],
           headers=JSON_HEADERS + [["x-forwarded-for", v]])
    v = ipv6()
    attack("hdr-x-real-ip-v6", H, "`x-real-ip` with an IPv6 address", chat(), [v], headers=JSON_HEADERS + [["x-real-ip", v]])
    v = ipv4()
    attack("hdr-forwarded", H, "RFC 7239 `forwarded: for=…`", chat(), [v],
           headers=JSON_HEADERS + [["forwarded", f"for={v};proto=https"]])
    v = email()
    attack("hdr-user-agent", H, "`user-agent` carrying an e-mail", chat(), [v],
           headers=JSON_HEADERS + [["user-agent", f"acme-agent/1.0 (+{v})"]])
    v, w = jwt(), email()
    attack("hdr-cookie", H, "`cookie` with a session JWT and an e-mail", chat(), [v, w],
           headers=JSON_HEADERS + [["cookie", f"session={v}; user={w}"]])
    v = email()
    attack("hdr-referer", H, "`referer` URL with an e-mail in its query", chat(), [v],
           headers=JSON_HEADERS + [["referer", f"https://app.example.net/inbox?u={v}"]])
    v = email()
    attack("hdr-from", H, "the standard `from` header (an e-mail)", chat(), [v], headers=JSON_HEADERS + [["from", v]])
    v = email()
    attack("hdr-openai-organization", H, "`openai-organization` / `openai-project` hold values", chat(), [v],
           headers=JSON_HEADERS + [["openai-organization", f"org-{v}"], ["openai-project", f"proj_{v}"]])
    v = email()
    attack("hdr-percent-encoded", H, "a header value percent-encoded", chat(), [v],
           headers=JSON_HEADERS + [["x-user", v.replace("@", "%40").replace(".", "%2E")]])
    v = ipv4()
    attack("hdr-name-is-value", H, "a header *name* holding an IP", chat(), [v],
           headers=JSON_HEADERS + [[f"x-client-{v}", "1"]])
    v, w = email(), email()
    attack("hdr-repeated", H, "the same header twice, a value in each", chat(), [v, w],
           headers=JSON_HEADERS + [["x-user", v], ["x-user", w]])
    v = ghp()
    attack("hdr-debug-token", H, "a GitHub token in a non-auth header", chat(), [v],
           headers=JSON_HEADERS + [["x-debug-token", v]])
    v = email()
    attack("hdr-content-type-param", H, "a `content-type` parameter holds an e-mail", chat(), [v],
           headers=[["content-type", f"application/json; charset=utf-8; owner={v}"]])
    v = email()
    attack("hdr-request-id", H, "`x-request-id` holds the value", chat(), [v],
           headers=JSON_HEADERS + [["x-request-id", f"req-{v}"]])
    v = email()
    attack("hdr-anthropic-metadata", H, "an Anthropic request with an `anthropic-beta`-like header value",
           anth(), [v], path="/v1/messages", headers=ANTHROPIC_HEADERS + [["x-stainless-user", v]])
    v = email()
    attack("hdr-get-no-body", H, "a GET with no body and a value in a header", None, [v], method="GET",
           path="/v1/models", headers=[["x-user-email", v]])
    v = ipv4()
    attack("hdr-control-host", H, "control: `host` holding an IP (rewritten by the route)", chat(), [v],
           headers=JSON_HEADERS + [["host", v]])
    v = email()
    attack("hdr-on-refused-body", H, "a header value on a request the filter refuses (1 MB body, not JSON)",
           "@@FILLER@@ not json", [v], headers=JSON_HEADERS + [["x-user-email", v]], pad_to=1_000_000)
    v = email()
    attack("hdr-h2", H, "a custom header over HTTP/2", chat(), [v], headers=JSON_HEADERS + [["x-user-email", v]],
           transport="http2")
    v, w = email(), jwt()
    attack("hdr-h2-cookies", H, "two `cookie` headers over HTTP/2 (Envoy joins them)", chat(), [v, w],
           headers=JSON_HEADERS + [["cookie", f"u={v}"], ["cookie", f"s={w}"]], transport="http2")

    # ---------------------------------------------------------------- query strings
    Q = "query"
    v = email()
    attack("query-email-encoded", Q, "`?email=` percent-encoded", chat(), [v],
           path="/v1/chat/completions?email=" + v.replace("@", "%40"))
    v = email()
    attack("query-email-raw", Q, "`?email=` with a raw @", chat(), [v], path=f"/v1/chat/completions?email={v}")
    v, w = email(), email()
    attack("query-repeated", Q, "a repeated parameter, a value in each", chat(), [v, w],
           path=f"/v1/chat/completions?to={v}&to={w}")
    v = phone()
    attack("query-plus-space", Q, "a phone with `+` for space and `%2B` for plus", chat(), [v],
           path="/v1/chat/completions?phone=" + v.replace("+", "%2B").replace(" ", "+"))
    v = email()
    attack("query-param-name", Q, "the value as a parameter *name*", chat(), [v],
           path="/v1/chat/completions?" + v.replace("@", "%40") + "=1")
    v = sk_openai()
    attack("query-api-key", Q, "an API key in `?api_key=`", anth(), [v], path=f"/v1/messages?api_key={v}",
           headers=ANTHROPIC_HEADERS)
    v = email()
    attack("query-double-encoded", Q, "a value percent-encoded twice", resp(), [v],
           path="/v1/responses?u=" + v.replace("@", "%2540"))
    v = ipv4()
    attack("query-semicolon", Q, "a `;`-separated parameter with an IP", chat(), [v],
           path=f"/v1/chat/completions?a=1;client={v}")
    v = card_spaced("-")
    attack("query-card", Q, "a dashed card number in the query", chat(), [v], path=f"/v1/chat/completions?card={v}")
    v = iban_compact()
    attack("query-get-models", Q, "a GET with an IBAN in the query and no body", None, [v], method="GET",
           path=f"/v1/models?iban={v}", headers=[])
    v = email()
    attack("query-fully-encoded", Q, "every character of the value percent-encoded", chat(), [v],
           path="/v1/chat/completions?x=" + "".join(f"%{b:02X}" for b in v.encode()))

    # ---------------------------------------------------------------- paths
    P = "path"
    v = email()
    attack("path-segment-email", P, "`/v1/files/<e-mail>` with a raw @", None, [v], method="GET",
           path=f"/v1/files/{v}", headers=[])
    v = email()
    attack("path-segment-encoded", P, "`/v1/files/<e-mail %40>/content`", None, [v], method="GET",
           path="/v1/files/" + v.replace("@", "%40") + "/content", headers=[])
    v = sk_openai()
    attack("path-segment-secret", P, "an API key as a path segment", None, [v], method="DELETE",
           path=f"/v1/threads/{v}", headers=[])
    v = card()
    attack("path-segment-card", P, "a card number as a path segment", None, [v], method="GET",
           path=f"/v1/customers/{v}/cards", headers=[])
    v = email()
    attack("path-responses-input-items", P, "`GET /v1/responses/<value>/input_items`", None, [v], method="GET",
           path=f"/v1/responses/resp_{v}/input_items", headers=[])
    v = email()
    attack("path-dot-segments-to-messages", P, "`/v1/chat/completions/../../messages`: chat rules on an Anthropic body",
           anth(system=f"Owner {v}"), [v], path="/v1/chat/completions/../../messages", headers=ANTHROPIC_HEADERS)
    v = email()
    attack("path-dot-segments-to-responses", P, "`/v1/messages/../responses`: Anthropic rules on a Responses body",
           {"model": "gpt-4.1", "input": f"Write to {v}."}, [v], path="/v1/messages/../responses")
    v = email()
    attack("path-dot-segments-x", P, "`/v1/x/../chat/completions` with a value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], path="/v1/x/../chat/completions")
    v = email()
    attack("path-double-slash", P, "`//v1//messages` with a value in a text block",
           anth_blocks({"type": "text", "text": f"Write to {v}."}), [v], path="//v1//messages",
           headers=ANTHROPIC_HEADERS)
    v = email()
    attack("path-percent-encoded", P, "`/v1/%63hat/completions` with a value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], path="/v1/%63hat/completions")
    v = email()
    attack("path-upper-case", P, "`/V1/CHAT/COMPLETIONS` with a value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], path="/V1/CHAT/COMPLETIONS")
    v = email()
    attack("path-matrix-params", P, "`/v1/chat/completions;v=1` with a value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], path="/v1/chat/completions;v=1")
    v = email()
    attack("path-encoded-slash", P, "`/v1/chat%2Fcompletions` with a value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], path="/v1/chat%2Fcompletions")
    v = email()
    attack("path-anthropic-prefix-suffix", P, "`/v1/messagesX` (the Anthropic prefix, another endpoint): chat body",
           chat(user=v), [v], path="/v1/messagesX", headers=JSON_HEADERS)

    # ---------------------------------------------------------------- transport
    X = "transport"
    v = email()
    attack("t-control-h2", X, "control: HTTP/2 prior knowledge, value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], transport="http2")
    v = email()
    attack("t-h2-trailers-value", X, "HTTP/2 request trailers carry an e-mail", chat(), [v], transport="http2",
           trailers=[["x-user-email", v]])
    v = email()
    attack("t-h2-body-then-trailers", X, "HTTP/2 body with a value in the user text, then trailers",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], transport="http2",
           trailers=[["x-checksum", "abc"]])
    v, w = email(), phone()
    attack("t-h2-body-and-trailers-values", X, "HTTP/2: values in the body text and in the trailers",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v, w], transport="http2",
           trailers=[["x-phone", w]])
    v = email()
    attack("t-h2-anthropic-trailers", X, "HTTP/2 Anthropic request: body text value, then trailers",
           anth_blocks({"type": "text", "text": f"Write to {v}."}), [v], path="/v1/messages",
           headers=ANTHROPIC_HEADERS, transport="http2", trailers=[["x-trace", "1"]])
    v = email()
    attack("t-h2-tiny-frames", X, "HTTP/2 body in 1-byte DATA frames", chat_msgs({"role": "user", "content": f"Write to {v}."}),
           [v], transport="http2", chunks=[1])
    v = email()
    attack("t-chunked-1-byte", X, "HTTP/1.1 chunked, 1-byte chunks", chat_msgs({"role": "user", "content": f"Write to {v}."}),
           [v], transport="chunked", chunks=[1])
    v = email()
    attack("t-chunked-odd", X, "HTTP/1.1 chunked split at odd sizes (mid value, mid UTF-8)",
           chat_msgs({"role": "user", "content": f"Caf\u00e9 \u00e8 chiuso, scrivi a {v} \u2014 grazie."}),
           [v], transport="chunked", chunks=[7, 3, 11, 1, 5, 2])
    v = email()
    attack("t-chunked-trailers", X, "HTTP/1.1 chunked with a trailer carrying an e-mail", chat(), [v],
           transport="chunked", trailers=[["x-user-email", v]],
           headers=JSON_HEADERS + [["trailer", "x-user-email"]])
    v = email()
    attack("t-chunked-body-then-trailers", X, "HTTP/1.1 chunked: value in the body text, then a trailer",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], transport="chunked",
           trailers=[["x-checksum", "abc"]], headers=JSON_HEADERS + [["trailer", "x-checksum"]])
    v = email()
    attack("t-gzip", X, "`content-encoding: gzip` body (refuse or mask, never pass)",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip",
           headers=JSON_HEADERS + [["content-encoding", "gzip"]])
    v = email()
    attack("t-gzip-upper", X, "`Content-Encoding: GZIP` in capitals", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip",
           headers=JSON_HEADERS + [["Content-Encoding", "GZIP"]])
    v = email()
    attack("t-gzip-identity-list", X, "`content-encoding: identity, gzip`", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip",
           headers=JSON_HEADERS + [["content-encoding", "identity, gzip"]])
    v = email()
    attack("t-gzip-h2", X, "gzip body over HTTP/2", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip", transport="http2",
           headers=JSON_HEADERS + [["content-encoding", "gzip"]])
    v = email()
    attack("t-gzip-undeclared", X, "a gzip body with no `content-encoding`", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip")
    v = email()
    attack("t-identity-lie", X, "`content-encoding: identity` on a gzip body", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], body_encoding="gzip",
           headers=JSON_HEADERS + [["content-encoding", "identity"]])
    v = email()
    attack("t-br-not-compressed", X, "`content-encoding: br` on a plain JSON body", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v],
           headers=JSON_HEADERS + [["content-encoding", "br"]])
    v = email()
    attack("t-transfer-encoding-gzip", X, "`transfer-encoding: gzip, chunked` (raw chunked, not compressed)",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], transport="chunked", headers=JSON_HEADERS + [["transfer-encoding", "gzip, chunked"]])
    v = email()
    attack("t-large-near-limit", X, "a body just under the 4 MiB limit, the value at the end of the text",
           chat_msgs({"role": "user", "content": f"@@FILLER@@ write to {v}"}), [v], pad_to=4_190_000)
    v = email()
    attack("t-large-over-limit", X, "a body just over the limit (must be refused, not passed)",
           chat_msgs({"role": "user", "content": f"@@FILLER@@ write to {v}"}), [v], pad_to=4_200_000)
    v = email()
    w = phone()
    attack("t-large-text-both-ends", X, "a 3 MB user text with a value at each end",
           chat_msgs({"role": "user", "content": f"{v} @@FILLER@@ {w}"}), [v, w], pad_to=3_000_000)
    v = email()
    attack("t-large-h2", X, "a large HTTP/2 body with the value at the end of the text",
           chat_msgs({"role": "user", "content": f"@@FILLER@@ write to {v}"}), [v], pad_to=2_000_000, transport="http2")
    v = email()
    attack("t-expect-continue", X, "`expect: 100-continue` with a value in the user text", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v],
           headers=JSON_HEADERS + [["expect", "100-continue"]])
    v = email()
    attack("t-http10", X, "an HTTP/1.0 request with a value in the user text", chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], http_version="HTTP/1.0")
    v = email()
    attack("t-control-chunked", X, "control: HTTP/1.1 chunked, value in the user text",
           chat_msgs({"role": "user", "content": f"Write to {v}."}), [v], transport="chunked", chunks=[64])

    # Found by the adversarial review of deny by default (2026-12-04): each
    # got past the walk before its fix (core/tests/review_findings.rs).
    C, A, J, H, Q, P = ("openai-chat", "anthropic-messages", "generic-json", "headers",
                        "query", "path")
    v = email()
    attack("chat-url-non-utf8-escape", C, "a URL in the text with a `%ff` escape beside the value `%40`-encoded",
           chat_msgs({"role": "user", "content": "fetch https://crm.example.net/find?x=%ff&owner="
                      + v.replace("@", "%40")}), [v])
    v = email()
    attack("anth-thinking-percent-encoded", A, "a `thinking` block holding the value `%40`-encoded",
           anth_blocks({"type": "thinking", "thinking": "Owner is " + v.replace("@", "%40") + " per the CRM.",
                        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}, role="assistant"), [v])
    v = email()
    attack("anth-thinking-json-escaped", A, "a `thinking` block holding JSON that spells the value with `\\u0040`",
           anth_blocks({"type": "thinking", "thinking": '{"owner":"' + v.replace("@", "\\u0040") + '"}',
                        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}, role="assistant"), [v])
    v = email()
    payload = base64.b64encode(f"mail {v}\n".encode()).decode()
    attack("chat-file-data-base64-text", C, "`file_data` a `data:text/plain;base64,` URL of text holding the value",
           chat_msgs({"role": "user", "content": [
               {"type": "file", "file": {"filename": "a.txt", "file_data": f"data:text/plain;base64,{payload}"}}]}),
           [v])
    v = akia()
    png = "iVBORw0KGgoAAAANSUhEUgAA/" + v + "/AAAAAAAA"
    attack("anth-image-secret-in-base64", A, "a genuine PNG head in base64 with an access key between `/`s",
           anth_blocks({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}),
           [v])
    v = email()
    attack("json-key-holding-json-escaped", J, "an object key that holds JSON spelling the value with `\\u0040`",
           '{"metadata":{"{\\"owner\\":\\"' + v.replace("@", "\\\\u0040") + '\\"}":"x"}}', [v])
    v = email()
    attack("query-non-utf8-escape", Q, "a query value `%40`-encoded and followed by a `%ff` escape", None, [v],
           path="/v1/chat/completions?owner=" + v.replace("@", "%40") + "%ff", method="GET", headers=[])
    v = email()
    attack("hdr-credential-percent-encoded", H, "`x-api-key` holding the value `%40`-encoded",
           chat_msgs({"role": "user", "content": CLEAN}), [v],
           headers=JSON_HEADERS + [["x-api-key", v.replace("@", "%40")]])
    v = email()
    attack("path-fragment-after-query", P, "the value in a fragment after the query", None, [v], method="GET",
           path="/v1/chat/completions?x=1#" + v, headers=[])

    # ---------------------------------------------------------------- more providers
    # Gemini, Bedrock, legacy completions, embeddings, Azure paths, batches,
    # file uploads: where their verbatim fields and shapes let a value hide.
    M = "more-providers"
    GEM = "/v1beta/models/gemini-2.5-flash:generateContent"
    v = email()
    attack("more-gemini-text", M, "a Gemini `contents[].parts[].text`",
           {"contents": [{"role": "user", "parts": [{"text": f"Mail {v} today."}]}]}, [v], path=GEM)
    v = card()
    attack("more-gemini-inline-data-text", M, "text in `inlineData.data` posing as media",
           {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": f"card {v}"}}]}]},
           [v], path=GEM)
    v = email()
    attack("more-gemini-thought-signature", M, "a value as a `thoughtSignature`",
           {"contents": [{"role": "model", "parts": [{"text": "ok", "thoughtSignature": v}]}]}, [v], path=GEM)
    v = iban()
    attack("more-gemini-function-args", M, "a value in `functionCall.args`",
           {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "pay", "args": {"iban": v}}}]}]},
           [v], path=GEM)
    v = phone()
    attack("more-gemini-system-instruction", M, "`systemInstruction` via the streaming method and `?alt=sse`",
           {"systemInstruction": {"parts": [{"text": f"Call {v}."}]}, "contents": []}, [v],
           path="/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    v = email()
    attack("more-gemini-vertex", M, "Vertex AI's publisher path",
           {"contents": [{"role": "user", "parts": [{"text": v}]}]}, [v],
           path="/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent")
    v = email()
    attack("more-gemini-api-key-query", M, "a value beside the API key in the query",
           {"contents": []}, [v], path=GEM + "?key=AIzaSyD-fake-key-0123456789abcdefghij&u=" + v.replace("@", "%40"))
    BED = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    v = email()
    attack("more-bedrock-text", M, "a Bedrock Converse text block",
           {"messages": [{"role": "user", "content": [{"text": f"Mail {v}"}]}]}, [v], path=BED)
    v = card()
    attack("more-bedrock-source-bytes-text", M, "text in an image's `source.bytes`",
           {"messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": f"card {v}"}}}]}]},
           [v], path=BED)
    v = email()
    attack("more-bedrock-reasoning", M, "a value in signed `reasoningText.text`",
           {"messages": [{"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": f"mail {v}", "signature": "sig"}}}]}]},
           [v], path=BED)
    v = email()
    attack("more-bedrock-tool-input", M, "a value in `toolUse.input`, streamed path",
           {"messages": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "send", "input": {"to": v}}}]}]},
           [v], path="/model/m/converse-stream")
    v = sk_anthropic()
    attack("more-bedrock-invoke", M, "Claude's Messages body through `InvokeModel`",
           {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10, "messages": [{"role": "user", "content": f"key {v}"}]},
           [v], path="/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke-with-response-stream")
    v = email()
    attack("more-completions-prompt-array", M, "legacy completions, `prompt` as an array",
           {"model": "gpt-3.5-turbo-instruct", "prompt": ["hi", f"mail {v}"]}, [v], path="/v1/completions")
    v = iban()
    attack("more-embeddings-input", M, "embeddings `input` array",
           {"model": "text-embedding-3-small", "input": ["x", v]}, [v], path="/v1/embeddings")
    v = email()
    attack("more-azure-chat", M, "Azure OpenAI deployment path with `api-version`",
           chat_msgs({"role": "user", "content": f"to {v}"}), [v],
           path="/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
           headers=JSON_HEADERS + [["api-key", "0123456789abcdef0123456789abcdef"]])
    v = email()
    attack("more-azure-deployment-name", M, "a value as the Azure deployment name", chat(), [v],
           path="/openai/deployments/" + v.replace("@", "%40") + "/chat/completions?api-version=2024-10-21")
    v, w = email(), card()
    attack("more-anthropic-batches", M, "a message batch: values in `custom_id` and a nested request",
           {"requests": [{"custom_id": v, "params": {"model": "claude", "max_tokens": 5,
                                                     "messages": [{"role": "user", "content": f"card {w}"}]}}]},
           [v, w], path="/v1/messages/batches", headers=ANTHROPIC_HEADERS)
    v = email()
    attack("more-anthropic-count-tokens", M, "`count_tokens` with a value",
           anth_blocks({"type": "text", "text": f"mail {v}"}), [v], path="/v1/messages/count_tokens",
           headers=ANTHROPIC_HEADERS)
    v, w, x = email(), phone(), "Wilhelmina Okonkwo-Brandt"
    line = json.dumps({"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": f"call {w}"}]}})
    upload = ("--latetb0und\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
              f"--latetb0und\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{v}.jsonl\"\r\n"
              "Content-Type: application/jsonl\r\n\r\n" + line + "\n\r\n"
              f"--latetb0und\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nfor {x}\r\n"
              "--latetb0und--\r\n")
    attack("more-files-batch-upload", M, "a batch input file upload: values in the filename, a JSON line, a text part",
           upload, [v, w, x], path="/v1/files",
           headers=[["content-type", "multipart/form-data; boundary=latetb0und"]])
    v = email()
    upload = (f"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n")
    attack("more-files-binary-part", M, "a binary part of no known file type around a value",
           None, [v], path="/v1/files", headers=[["content-type", "multipart/form-data; boundary=x"]],
           body_base64=base64.b64encode(upload.encode() + b"\xff\xfe" + v.encode() + b"\r\n--x--\r\n").decode())

    # ------------------------------------------------- person names (no marker:
    # the log grep cannot see them; the leak rule reads them like any value)
    v = "Ottavia Ferrantelli"
    attack("name-in-metadata", C, "a person's name in `metadata`",
           chat(metadata={"customer": v}), [v])
    v = "Gianmarco Pastorelli"
    attack("name-in-tool-description", C, "a tool `description` names a person",
           chat(tools=[tool(description=f"Look up the orders of {v}.")]), [v])
    v = "Gudrun Vollmerhausen"
    attack("name-in-header", H, "an `x-user-name` header holds a person's name",
           chat_msgs({"role": "user", "content": CLEAN}), [v], headers=JSON_HEADERS + [["x-user-name", v]])
    v = "Rosalind Achterwood"
    attack("name-in-query", Q, "a query value holds a person's name, `%20` for the space", None, [v],
           path="/v1/chat/completions?customer=" + v.replace(" ", "%20"), method="GET", headers=[])
    v = "Hildegard Kettenreiter"
    attack("name-as-json-key", C, "a `metadata` key is a person's name",
           chat(metadata={v: "vip"}), [v])


def main():
    build()
    ids = [a["id"] for a in ATTACKS]
    assert len(ids) == len(set(ids)), "duplicate ids"
    text = "".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) + "\n" for a in ATTACKS)
    if sys.argv[1:] == ["--check"]:
        import os
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl")
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print("envoy/attacks/corpus.jsonl is stale: run "
                      "python3 envoy/attacks/corpus.py > envoy/attacks/corpus.jsonl", file=sys.stderr)
                sys.exit(1)
        return
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
