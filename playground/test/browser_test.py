#!/usr/bin/env python3
"""The playground in a real browser: headless Chromium (Debian's package)
loads the page from a loopback server and the test reads the DOM it left.

Each case puts its fields in the page's URL fragment (base64url), lets the
page run, and compares what the page shows (#masked, #error, #restored) with
what the same call gives natively (`cargo run -p latet-playground --example
native`), byte for byte. The tour request is the README's.

    python3 playground/test/browser_test.py SITE NATIVE [--screenshot PNG]

SITE: the folder playground/build.sh printed; NATIVE: the built example.
Standard library only. Prints 'N passed, N failed'.
"""

import base64
import functools
import html.parser
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

CONFIG = '{"controlCluster": "latet_control", "gatewayTokenEnv": "LATET_GATEWAY_TOKEN"}'
PATH = "/v1/chat/completions"
TOUR_TEXT = "Write to mario.rossi@acme.it or call +39 347 123 4567"
TOUR = json.dumps(
    {"model": "gpt-4o", "messages": [{"role": "user", "content": TOUR_TEXT}]},
    separators=(",", ":"),
)
PAGE_FILES = {"/", "/index.html", "/playground.js", "/style.css", "/latet_playground.wasm", "/favicon.ico"}


def b64url(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def fragment(**fields):
    raw = {"chunk", "echo"}
    return "&".join(f"{k}={v if k in raw else b64url(v)}" for k, v in fields.items())


class Elements(html.parser.HTMLParser):
    """The text content of every element with an id, and body's data-state."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts = {}
        self.open = []  # [id, depth] of elements being read
        self.depth = 0
        self.state = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body":
            self.state = attrs.get("data-state")
        if tag in ("meta", "link", "input", "br", "img", "option"):
            return
        self.depth += 1
        if "id" in attrs:
            self.texts[attrs["id"]] = ""
            self.open.append([attrs["id"], self.depth])

    def handle_endtag(self, tag):
        if tag in ("meta", "link", "input", "br", "img", "option"):
            return
        self.open = [o for o in self.open if o[1] < self.depth]
        self.depth -= 1

    def handle_data(self, data):
        for element_id, _ in self.open:
            self.texts[element_id] += data


class Server:
    """The built site on 127.0.0.1 (a free port), noting every path asked."""

    def __init__(self, site):
        self.paths = []
        paths = self.paths

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                paths.append(self.path.split("?")[0])

        handler = functools.partial(Handler, directory=site)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("browser test: no chromium (scripts/setup.sh installs Debian's)")


def chromium(url, *extra):
    """Runs headless Chromium on url; its stdout."""
    with tempfile.TemporaryDirectory(prefix="latet-chromium-") as profile:
        args = [
            chromium_binary(),
            "--headless=new",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-sync",
            "--disable-component-update",
            "--disable-background-networking",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",
            *extra,
            url,
        ]
        run = subprocess.run(args, capture_output=True, timeout=120)
        if run.returncode != 0:
            sys.stderr.write(run.stderr.decode(errors="replace")[-2000:])
            raise RuntimeError(f"chromium exited with {run.returncode}")
        return run.stdout.decode()


def page(server, frag):
    dom = chromium(server.url + "#" + frag, "--dump-dom")
    parsed = Elements()
    parsed.feed(dom)
    if parsed.state != "done":
        raise AssertionError(f"the page did not finish (data-state={parsed.state!r})")
    return parsed.texts


def native(binary, **call):
    run = subprocess.run([binary], input=json.dumps(call).encode(), capture_output=True, check=True)
    return json.loads(run.stdout)


def echo_whole(masked):
    content = json.loads(masked)["messages"][-1]["content"]
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})


def echo_sse(masked):
    content = json.loads(masked)["messages"][-1]["content"]
    parts = [content[i : i + 9] for i in range(0, len(content), 9)]
    events = [json.dumps({"choices": [{"index": 0, "delta": {"content": p}}]}) for p in parts]
    return "".join(f"data: {e}\n\n" for e in events) + "data: [DONE]\n\n"


def main():
    args = sys.argv[1:]
    screenshot = None
    if "--screenshot" in args:
        at = args.index("--screenshot")
        screenshot = args[at + 1]
        del args[at : at + 2]
    site, binary = args
    server = Server(site)
    results = []

    def case(name):
        def run(fn):
            try:
                fn()
                results.append((name, None))
                print(f"ok   {name}")
            except Exception as err:  # noqa: BLE001 - every failure is reported
                results.append((name, err))
                print(f"FAIL {name}: {type(err).__name__}: {err}")

        return run

    expected = native(binary, config=CONFIG, vault="", path=PATH, body=TOUR)
    masked = expected["masked"]

    @case("the tour request is masked as the native engine masks it, byte for byte")
    def _():
        shown = page(server, fragment(config=CONFIG, path=PATH, request=TOUR))
        assert expected["error"] is None, expected["error"]
        assert shown["error"] == "", shown["error"]
        assert shown["masked"].encode() == masked.encode(), (shown["masked"], masked)
        assert "mario.rossi@acme.it" not in shown["masked"]
        assert "347 123 4567" not in shown["masked"]
        assert shown["masked"] != TOUR
        # The spans list names both kinds; the new entries are marked demo.
        assert "email at" in shown["spans"] and "phone at" in shown["spans"], shown["spans"]
        assert shown["new-entries"].count("demo") == 3, shown["new-entries"]
        assert "openai-chat" in shown["provider"]

    @case("a vault entry's surrogate is used, as natively")
    def _():
        vault = '[{"kind": "phone", "value": "+39 347 123 4567", "surrogate": "+39 333 000 1111"}]'
        want = native(binary, config=CONFIG, vault=vault, path=PATH, body=TOUR)["masked"]
        shown = page(server, fragment(config=CONFIG, vault=vault, path=PATH, request=TOUR))
        assert shown["masked"] == want
        assert "call +39 333 000 1111" in shown["masked"]

    @case("a configuration error names the field")
    def _():
        bad = '{"controlCluster": "latet_control", "gatewayTokenEnv": "T", "routes": [{"path": "/v1/x", "provider": "openai-chatt"}]}'
        want = native(binary, config=bad, vault="", path=PATH, body=TOUR)["error"]
        shown = page(server, fragment(config=bad, path=PATH, request=TOUR))
        assert want["field"] == "routes[0].provider"
        assert shown["error"] == want["message"], (shown["error"], want)
        assert "routes[0].provider" in shown["error"]
        assert "openai-chatt" not in shown["error"]
        assert shown["masked"] == ""

    @case("an echoed answer is restored, as natively")
    def _():
        answer = echo_whole(masked)
        want = native(binary, config=CONFIG, vault="", path=PATH, body=TOUR, answer=answer)["restore"]
        shown = page(server, fragment(config=CONFIG, path=PATH, request=TOUR, answer=answer))
        assert shown["restored"] == want["restored"]
        assert json.loads(shown["restored"])["choices"][0]["message"]["content"] == TOUR_TEXT

    @case("a streamed answer is restored chunk by chunk, as natively")
    def _():
        answer = echo_sse(masked)
        want = native(binary, config=CONFIG, vault="", path=PATH, body=TOUR, answer=answer,
                      contentType="text/event-stream", chunkBytes=5)["restore"]
        shown = page(server, fragment(config=CONFIG, path=PATH, request=TOUR, answer=answer,
                                      contentType="text/event-stream", chunk="5"))
        assert shown["restored"] == want["restored"]
        text = "".join(
            json.loads(line[6:])["choices"][0]["delta"]["content"]
            for line in shown["restored"].splitlines()
            if line.startswith("data: {")
        )
        assert text == TOUR_TEXT, text
        assert shown["chunks"].count("in:") == len(want["chunks"]) > 10

    @case("the page's own echo button path restores the request's text")
    def _():
        shown = page(server, fragment(config=CONFIG, path=PATH, request=TOUR, echo="1"))
        assert json.loads(shown["restored"])["choices"][0]["message"]["content"] == TOUR_TEXT

    @case("the page asked the server for its own files only")
    def _():
        assert server.paths and set(server.paths) <= PAGE_FILES, server.paths

    if screenshot:
        frag = fragment(config=CONFIG, path=PATH, request=TOUR, echo="1", contentType="text/event-stream", chunk="24")
        chromium(server.url + "#" + frag, f"--screenshot={os.path.abspath(screenshot)}", "--window-size=1400,1250",
                 "--hide-scrollbars")
        print(f"screenshot: {screenshot}")
    server.stop()
    failed = sum(1 for _, err in results if err)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
