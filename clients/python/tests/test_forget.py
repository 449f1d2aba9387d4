"""forget against the real service: batches of at most 1,000, each distinct
value counted once over the whole list, and a rerun counting what is gone
as unknown."""

from __future__ import annotations

from pathlib import Path

import latet
from conftest import Server

FORGET_OK = 'latet_forget_calls_total{path="apps",outcome="ok"}'
FORGET_ROUTE_200 = 'latet_http_requests_total{route="/_latet/apps/v1/forget",status="200"}'


def names(count: int, start: int = 0) -> list[str]:
    return [f"Person{i:05d} Test" for i in range(start, start + count)]


def test_2500_values_go_in_three_calls_and_a_rerun_is_safe(
    server: Server, shop: dict[str, Path]
) -> None:
    values = names(2500)
    # The vault holds four values in five, spread over every call.
    held = [v for i, v in enumerate(values) if i % 5 != 0]
    server.add_entries(shop["first"].read_text().strip(), [("name", v) for v in held])
    client = latet.Client(server.url, token_file=shop["erasure"])

    assert client.forget(values) == latet.ForgetResult(forgotten=2000, unknown=500)

    log = server.admin_log("apps.forgotten")
    assert [(r["requested"], r["forgotten"], r["unknown"]) for r in log] == [
        (1000, 800, 200),
        (1000, 800, 200),
        (500, 400, 100),
    ]
    assert {r["token"] for r in log} == {"erasure"}
    assert server.metric(FORGET_OK) == 3
    assert server.metric(FORGET_ROUTE_200) == 3

    # The same list again: nothing left to forget, every value unknown.
    assert client.forget(values) == latet.ForgetResult(forgotten=0, unknown=2500)
    assert server.metric(FORGET_OK) == 6


def test_duplicates_across_calls_count_once(server: Server, shop: dict[str, Path]) -> None:
    first = names(1000)
    later = names(200, start=1000)
    server.add_entries(shop["first"].read_text().strip(), [("name", v) for v in first[:600]])
    # 1,000 distinct values, then 300 of them again (they would land in a
    # second call), 200 new ones, and repeats inside that stretch too.
    values = first + first[:300] + later + later[:50] + [first[999]]

    result = latet.Client(server.url, token_file=shop["erasure"]).forget(values)

    assert result == latet.ForgetResult(forgotten=600, unknown=600)
    log = server.admin_log("apps.forgotten")
    assert [r["requested"] for r in log] == [1000, 200]
    assert sum(r["forgotten"] + r["unknown"] for r in log) == 1200


def test_values_are_exact_and_order_is_kept(server: Server, shop: dict[str, Path]) -> None:
    server.add_entries(shop["first"].read_text().strip(), [("email", "mario.rossi@acme.it")])
    client = latet.Client(server.url, token_file=shop["erasure"], timeout=30)
    # Other case is another value (rule V3); the domain entry stays (V5).
    result = client.forget(["MARIO.ROSSI@ACME.IT", "mario.rossi@acme.it", "mario.rossi@acme.it"])
    assert result == latet.ForgetResult(forgotten=1, unknown=1)
    assert client.forget(["acme.it"]) == latet.ForgetResult(forgotten=1, unknown=0)


def test_small_batches_and_an_empty_list(server: Server, shop: dict[str, Path]) -> None:
    client = latet.Client(server.url, token_file=shop["erasure"])
    assert client.forget([]) == latet.ForgetResult(0, 0)
    assert server.admin_log("apps.forgotten") == [], "an empty list sends nothing"
    assert client.forget(iter(names(25)), batch_size=10) == latet.ForgetResult(0, 25)
    assert [r["requested"] for r in server.admin_log("apps.forgotten")] == [10, 10, 5]
