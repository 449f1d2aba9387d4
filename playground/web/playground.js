// The playground page: calls the engine's .wasm (latet_playground.wasm,
// built by playground/build.sh) through its raw interface, JSON in and
// JSON out (playground/src/abi.rs), and shows the outcome. Nothing is sent
// anywhere: the page's policy allows fetching its own files only.
//
// Test hooks: a URL fragment `#config=…&request=…` (base64url of the
// texts; also `vault=`, `path=`, `answer=`, `contentType=`, `chunk=`, and
// `echo=1` to echo the masked request as the answer) fills the fields and
// runs. The masked body goes to #masked, any error to #error, the restored
// answer to #restored; body[data-state] is "done" once a run finished.
"use strict";

const DEFAULTS = {
  config: '{"controlCluster": "latet_control", "gatewayTokenEnv": "LATET_GATEWAY_TOKEN"}',
  vault: "[]",
  path: "/v1/chat/completions",
  request: '{"model":"gpt-4o","messages":[{"role":"user","content":"Write to mario.rossi@acme.it or call +39 347 123 4567"}]}',
};

const $ = (id) => document.getElementById(id);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let engine = null;
let lastOutcome = null;

async function loadEngine() {
  const url = "latet_playground.wasm";
  let instance;
  try {
    ({ instance } = await WebAssembly.instantiateStreaming(fetch(url), {}));
  } catch (err) {
    // A server that does not say application/wasm: compile from the bytes.
    const bytes = await (await fetch(url)).arrayBuffer();
    ({ instance } = await WebAssembly.instantiate(bytes, {}));
  }
  return instance.exports;
}

// One call into the engine: the call's JSON in a buffer the module hands
// out, the answer's pointer and length packed in a 64-bit integer.
function callEngine(call) {
  const input = encoder.encode(JSON.stringify(call));
  const ptr = engine.latet_alloc(input.length);
  new Uint8Array(engine.memory.buffer, ptr, input.length).set(input);
  const packed = BigInt.asUintN(64, engine.latet_run(ptr, input.length));
  engine.latet_free(ptr, input.length);
  const outPtr = Number(packed >> 32n);
  const outLen = Number(packed & 0xffffffffn);
  const text = decoder.decode(new Uint8Array(engine.memory.buffer, outPtr, outLen));
  engine.latet_free(outPtr, outLen);
  return JSON.parse(text);
}

function currentCall(withAnswer) {
  const call = {
    config: $("config").value,
    vault: $("vault").value,
    path: $("path").value,
    body: $("request").value,
  };
  if (withAnswer) {
    call.answer = $("answer").value;
    call.contentType = $("content-type").value;
    const chunk = parseInt($("chunk").value, 10);
    if (chunk > 0) call.chunkBytes = chunk;
  }
  return call;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

function showError(error) {
  $("error").textContent = error ? error.message : "";
}

// The masked body, each replaced span in a <mark> (the element's text stays
// the body, byte for byte).
function showMasked(outcome) {
  const pre = $("masked");
  clear(pre);
  const text = outcome.masked ?? "";
  let at = 0;
  for (const span of outcome.spans) {
    pre.append(text.slice(at, span.start));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(span.start, span.end);
    mark.title = span.kind + (span.new ? " (new entry, demo surrogate)" : " (vault entry)");
    if (span.new) mark.className = "new";
    pre.append(mark);
    at = span.end;
  }
  pre.append(text.slice(at));
  $("provider").textContent = outcome.provider ? "provider module: " + outcome.provider + (outcome.changed ? "" : " (forwarded as it came)") : "";

  const list = $("spans");
  clear(list);
  for (const span of outcome.spans) {
    const li = document.createElement("li");
    li.textContent = span.kind + " at " + span.start + "–" + span.end + ": " + text.slice(span.start, span.end) + (span.new ? " (new)" : " (vault)");
    list.append(li);
  }

  const body = $("new-entries").tBodies[0];
  clear(body);
  const rows = [...outcome.newEntries, ...outcome.vaultDerived];
  for (const entry of rows) {
    const tr = document.createElement("tr");
    for (const cell of [entry.kind, entry.value, entry.surrogate]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.append(td);
    }
    const td = document.createElement("td");
    if (entry.demo) {
      const badge = document.createElement("span");
      badge.className = "demo";
      badge.textContent = "demo";
      badge.title = "derived here under the playground's demo key, not a real vault's";
      td.append(badge);
    }
    tr.append(td);
    body.append(tr);
  }
}

function showRestore(restore) {
  const chunks = $("chunks");
  clear(chunks);
  if (!restore) {
    $("restored").textContent = "";
    $("restore-stats").textContent = "";
    return;
  }
  $("restored").textContent = restore.restored;
  $("restore-stats").textContent =
    restore.format + ": " + restore.restoredCount + " restored, " + restore.declinedOutOfScope +
    " out of scope, " + restore.declinedUrl + " in URLs, " + restore.declinedRetired + " retired" +
    (restore.error ? " — " + restore.error : "");
  if (restore.chunks.length > 1) {
    for (const chunk of restore.chunks) {
      const li = document.createElement("li");
      const inSpan = document.createElement("span");
      inSpan.className = "in";
      inSpan.textContent = "in:  " + JSON.stringify(chunk.in);
      li.append(inSpan, "\nout: " + JSON.stringify(chunk.out));
      chunks.append(li);
    }
  }
}

function maskNow() {
  const outcome = callEngine(currentCall(false));
  lastOutcome = outcome;
  showError(outcome.error);
  showMasked(outcome);
  showRestore(null);
  return outcome;
}

function restoreNow() {
  const outcome = callEngine(currentCall(true));
  lastOutcome = outcome;
  showError(outcome.error);
  showMasked(outcome);
  showRestore(outcome.restore);
  return outcome;
}

// The last user message's text, as the project's fake LLM echoes it.
function lastUserText(request) {
  const textOf = (content) =>
    typeof content === "string" ? content
      : Array.isArray(content) ? content.map((p) => (typeof p === "string" ? p : p.text ?? "")).join("") : "";
  if (Array.isArray(request.messages)) {
    const users = request.messages.filter((m) => m.role === "user");
    if (users.length) return textOf(users[users.length - 1].content);
  }
  if (typeof request.input === "string") return request.input;
  if (Array.isArray(request.contents) && request.contents.length) {
    return textOf(request.contents[request.contents.length - 1].parts);
  }
  return null;
}

function pieces(text, size) {
  const out = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

// An answer that echoes the masked request, in the provider's shape, whole
// or as server-sent events.
function echoAnswer(outcome, contentType) {
  let request;
  try {
    request = JSON.parse(outcome.masked);
  } catch (err) {
    return outcome.masked;
  }
  const text = lastUserText(request);
  if (text === null) return outcome.masked;
  const stream = contentType === "text/event-stream";
  if (outcome.provider === "anthropic-messages") {
    if (!stream) return JSON.stringify({ type: "message", role: "assistant", content: [{ type: "text", text }] });
    const events = [["message_start", { type: "message_start", message: { role: "assistant", content: [] } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]];
    for (const part of pieces(text, 8)) {
      events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: part } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index: 0 }], ["message_stop", { type: "message_stop" }]);
    return events.map(([name, data]) => "event: " + name + "\ndata: " + JSON.stringify(data) + "\n\n").join("");
  }
  if (!stream) {
    return JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }] });
  }
  return pieces(text, 8)
    .map((part) => "data: " + JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: part } }] }) + "\n\n")
    .join("") + "data: [DONE]\n\n";
}

function echoNow() {
  const outcome = maskNow();
  if (outcome.error) return outcome;
  $("answer").value = echoAnswer(outcome, $("content-type").value);
  return restoreNow();
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return decoder.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

// Fills the fields from the fragment; true when it asked for a run.
function readFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const fields = { config: "config", vault: "vault", path: "path", request: "request", answer: "answer" };
  let given = false;
  for (const [key, id] of Object.entries(fields)) {
    if (params.has(key)) {
      $(id).value = fromBase64Url(params.get(key));
      given = true;
    }
  }
  if (params.has("contentType")) $("content-type").value = fromBase64Url(params.get("contentType"));
  if (params.has("chunk")) $("chunk").value = params.get("chunk");
  return { given, echo: params.get("echo") === "1", answer: params.has("answer") };
}

async function main() {
  for (const [id, value] of Object.entries(DEFAULTS)) $(id).value = value;
  let fragment;
  try {
    fragment = readFragment();
  } catch (err) {
    showError({ message: "the URL fragment is not base64url of the fields" });
    document.body.dataset.state = "done";
    return;
  }
  try {
    engine = await loadEngine();
  } catch (err) {
    showError({ message: "the engine (latet_playground.wasm) could not be loaded: build it with playground/build.sh" });
    document.body.dataset.state = "done";
    return;
  }
  $("mask-button").addEventListener("click", maskNow);
  $("restore-button").addEventListener("click", restoreNow);
  $("echo-button").addEventListener("click", echoNow);
  try {
    if (fragment.echo) echoNow();
    else if (fragment.answer) restoreNow();
    else maskNow();
  } catch (err) {
    showError({ message: "the engine stopped: " + err.name });
  }
  document.body.dataset.state = "done";
}

main();
