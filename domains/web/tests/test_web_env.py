"""The real browser environment: stable bids, only the local apps reachable, tabs, errors, threads."""

from __future__ import annotations

import threading
from typing import Any

from awctl_domains.web.codec import WebObservationCodec
from awctl_domains.web.tasks import SHOP

from awctl.domain import Task

OBS = WebObservationCodec()


def _task(setup: dict[str, Any]) -> Task:
    return Task(id="web/test/env", domain="web", suite="test", instruction="", solution=[],
                check=lambda env: None, setup=setup)  # type: ignore[arg-type,return-value]


def test_elements_keep_their_bids_across_steps_and_reloads(web_env: Any) -> None:
    first = OBS.parse(web_env.reset(_task({"start": SHOP + "product/1"})))
    bids = {(n.role, n.name): n.bid for n in first.nodes if n.bid}
    qty = first.bid_of("spinbutton", "Quantity")
    after_fill = OBS.parse(web_env.step(f"fill({qty!r}, '3')").observation)
    hovered = OBS.parse(web_env.step(f"hover({first.bid_of('button', 'Add to cart')!r})").observation)
    for obs in (after_fill, hovered):
        assert {(n.role, n.name): n.bid for n in obs.nodes if n.bid and n.role != "spinbutton"} == {
            k: v for k, v in bids.items() if k[0] != "spinbutton"}
    assert after_fill.by_bid()[qty].value == 3
    # Loading the same page again numbers its elements the same way (document order).
    again = OBS.parse(web_env.step(f"goto({SHOP + 'product/1'!r})").observation)
    assert {(n.role, n.name): n.bid for n in again.nodes if n.bid} == bids


def test_only_the_local_apps_are_reachable(web_env: Any) -> None:
    web_env.reset(_task({"start": SHOP}))
    for url in ("http://example.com/", "https://shop.test/", "file:///etc/passwd"):
        result = web_env.step(f"goto({url!r})")
        obs = OBS.parse(result.observation)
        assert obs.error and "only the local apps" in obs.error and obs.url == SHOP
    # The browser itself resolves nothing but the apps, whatever a page links to.
    page = web_env._call(lambda: web_env._page.evaluate(
        "() => fetch('http://example.com/').then(() => 'reached', () => 'blocked')"))
    assert page == "blocked"


def test_tab_actions_and_errors_show_in_the_observation(web_env: Any) -> None:
    web_env.reset(_task({"start": SHOP}))
    obs = OBS.parse(web_env.step("new_tab()").observation)
    assert [(t.url, t.active) for t in obs.tabs] == [(SHOP, False), ("about:blank", True)]
    obs = OBS.parse(web_env.step("goto('http://tracker.test/')").observation)
    assert obs.title == "Issues · Bugsy" and obs.root.name == "Issues · Bugsy"
    assert OBS.parse(web_env.step("tab_focus(0)").observation).url == SHOP
    missing = web_env.step("click('9999')")
    assert missing.info["error"] == "no element with bid '9999' on the page"
    assert OBS.parse(missing.observation).error == missing.info["error"]
    assert OBS.parse(web_env.step("tab_focus(5)").observation).error == "no tab with index 5 (2 open)"
    closed = OBS.parse(web_env.step("tab_close()").observation)
    assert [(t.url, t.active) for t in closed.tabs] == [("http://tracker.test/", True)]
    bad = OBS.parse(web_env.step("window.close()").observation)
    assert bad.error.startswith("invalid action")
    ended = web_env.step("report_infeasible('no such product')")
    assert ended.done and "report_infeasible: no such product" in ended.info["messages"]


def test_the_environment_can_be_driven_from_another_thread(web_env: Any) -> None:
    out: dict[str, str] = {}
    thread = threading.Thread(target=lambda: out.update(obs=web_env.reset(_task({"start": SHOP + "cart"}))))
    thread.start()
    thread.join(60)
    assert OBS.parse(out["obs"]).title == "Cart - Acme Shop"
    assert OBS.parse(web_env.step("noop(0)").observation).title == "Cart - Acme Shop"


def test_each_episode_gets_a_fresh_database(web_env: Any) -> None:
    web_env.reset(_task({"start": SHOP, "shop": {"cart": [{"sku": "MUG-01", "qty": 2}]}}))
    assert OBS.parse(web_env.step("noop(0)").observation).find("link", "Cart (2)")
    assert OBS.parse(web_env.reset(_task({"start": SHOP}))).find("link", "Cart (0)")
