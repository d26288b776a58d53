"""Web tasks on the shipped apps: the ``shop`` suite, the ``tracker`` suite, ``cross`` (both apps, two tabs)
and ``all``.

Every task has a setup (the start page and rows for the apps' databases), a reference solution (BrowserGym
actions whose bids are those the real environment assigns on these pages, checked by the tests) and a
checker that reads the apps' state only through ``env.step``: it opens a page that shows the state with
``goto(...)`` and reads the accessibility tree, so the same checker judges a real browser or a simulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from awctl.domain import CheckResult, Task
from awctl.env import Environment
from awctl.errors import CodecError

from .codec import WebObservation, WebObservationCodec

SHOP = "http://shop.test/"
TRACKER = "http://tracker.test/"
_CODEC = WebObservationCodec()
Check = Callable[[Environment], CheckResult]


# ── reading state through env.step ───────────────────────────────────────────────────────────────────


def visit(env: Environment, url: str) -> WebObservation | str:
    """The page at ``url`` as the environment shows it, or a message saying why it could not be read."""
    text = env.step(f"goto({url!r})").observation
    try:
        obs = _CODEC.parse(text)
    except CodecError as exc:
        return f"could not read {url}: {exc.message}"
    if obs.error:
        return f"could not open {url}: {obs.error}"
    if obs.tree is None:
        return f"{url} shows no accessibility tree"
    return obs


def texts(obs: WebObservation) -> list[str]:
    """Every non-empty node name of the page, in order (the text a reader sees)."""
    return [n.name for n in obs.nodes if n.name]


def page_shows(url: str, *needles: str, absent: tuple[str, ...] = (), pairs: tuple[tuple[str, str], ...] = ()) -> Check:
    """A checker: the page at ``url`` has a node named exactly each of ``needles``, none named any of
    ``absent``, and for each ``(a, b)`` of ``pairs`` a node ``a`` directly followed by a node ``b``."""

    def check(env: Environment) -> CheckResult:
        obs = visit(env, url)
        if isinstance(obs, str):
            return CheckResult(False, obs, 0.0)
        shown = texts(obs)
        missing = [n for n in needles if n not in shown]
        present = [n for n in absent if n in shown]
        unpaired = [p for p in pairs if not any(shown[i:i + 2] == list(p) for i in range(len(shown)))]
        if missing or present or unpaired:
            parts = []
            if missing:
                parts.append(f"missing {missing}")
            if present:
                parts.append(f"still shows {present}")
            if unpaired:
                parts.append(f"no {' then '.join(unpaired[0])!r}")
            return CheckResult(False, f"{url}: {'; '.join(parts)}", 0.0)
        return CheckResult(True, f"{url} shows the expected state", 1.0)

    return check


def cart_is(expected: dict[str, int]) -> Check:
    """A checker: the shop's cart holds exactly ``expected`` (product name -> quantity)."""

    def check(env: Environment) -> CheckResult:
        obs = visit(env, SHOP + "cart")
        if isinstance(obs, str):
            return CheckResult(False, obs, 0.0)
        got: dict[str, int] = {}
        for node in obs.nodes:
            if node.role == "spinbutton" and (node.name or "").startswith("Quantity of "):
                try:
                    got[node.name[len("Quantity of "):]] = int(float(str(node.value)))  # type: ignore[index]
                except ValueError:
                    return CheckResult(False, f"cart quantity {node.value!r} of {node.name!r} is not a number", 0.0)
        if got != expected:
            return CheckResult(False, f"the cart holds {got}, expected {expected}", 0.0)
        return CheckResult(True, f"the cart holds {expected}", 1.0)

    return check


def all_of(*checks: Check) -> Check:
    def check(env: Environment) -> CheckResult:
        for c in checks:
            result = c(env)
            if not result.ok:
                return result
        return CheckResult(True, "every part of the state is as expected", 1.0)

    return check


def _task(suite: str, name: str, instruction: str, solution: list[str], check: Check,
          setup: dict[str, Any], tags: tuple[str, ...] = ()) -> Task:
    return Task(id=f"web/{suite}/{name}", domain="web", suite=suite, instruction=instruction, solution=solution,
                check=check, setup=setup, max_turns=len(solution) + 5, tags=(suite, *tags))


def _cart(*items: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"sku": sku, "qty": qty} for sku, qty in items]


_ORDERS = [{"name": "Kim Park", "address": "9 Bay Street, Hull", "items": [["MUG-01", 1]]},
           {"name": "Kim Park", "address": "9 Bay Street, Hull", "items": [["CHR-04", 1]]}]
_DUPLICATES = {"issues": [
    {"title": "Crash on start", "body": "The app crashes on start.", "priority": "high", "labels": ["bug"]},
    {"title": "App crashes at startup", "body": "Same as the start crash.", "labels": ["bug", "duplicate"]},
    {"title": "Startup crash", "body": "Crashes when starting.", "labels": ["duplicate"]},
    {"title": "Add search", "body": "Search issues by text.", "labels": ["feature"]},
]}

SHOP_TASKS: tuple[Task, ...] = (
    _task("shop", "add_mugs", "Add two ceramic mugs to the shopping cart.",
          ["click('31')", "fill('23', '2')", "click('24')"],
          cart_is({"Ceramic mug": 2}), {"start": SHOP}, ("cart",)),
    _task("shop", "search_lamp", "Search the shop for 'lamp' and add the lamp you find to the cart.",
          ["fill('19', 'lamp')", "click('27')", "click('31')", "click('24')"],
          cart_is({"Desk lamp": 1}), {"start": SHOP}, ("search", "cart")),
    _task("shop", "cheapest_stationery", "Add the cheapest product of the Stationery category to the cart.",
          ["select_option('21', 'Stationery')", "click('27')", "click('33')", "click('24')"],
          cart_is({"Gel pen set": 1}), {"start": SHOP}, ("filter", "cart")),
    _task("shop", "kettle_and_mug", "Add one electric kettle and one ceramic mug to the cart.",
          ["click('33')", "click('24')", "click('10')", "click('31')", "click('24')"],
          cart_is({"Electric kettle": 1, "Ceramic mug": 1}), {"start": SHOP}, ("cart",)),
    _task("shop", "remove_notebooks", "Remove the dotted notebooks from the cart and keep everything else.",
          ["click('12')", "click('27')"],
          cart_is({"Ceramic mug": 1}), {"start": SHOP, "shop": {"cart": _cart(("MUG-01", 1), ("NTB-05", 2))}},
          ("cart",)),
    _task("shop", "three_bottles", "Change the number of water bottles in the cart to 3.",
          ["click('12')", "fill('21', '3')", "click('25')"],
          cart_is({"Water bottle": 3}), {"start": SHOP, "shop": {"cart": _cart(("BTL-07", 1))}}, ("cart",)),
    _task("shop", "empty_cart", "Empty the shopping cart.",
          ["click('12')", "click('22')", "click('22')", "click('22')"],
          cart_is({}), {"start": SHOP, "shop": {"cart": _cart(("MUG-01", 1), ("LMP-03", 1), ("PEN-06", 2))}},
          ("cart",)),
    _task("shop", "checkout_standard",
          "Check out the cart with standard shipping to Robin Lee, 12 Harbour Road, Portsmouth.",
          ["click('12')", "click('28')", "fill('21', 'Robin Lee')", "fill('23', '12 Harbour Road, Portsmouth')",
           "click('30')"],
          all_of(page_shows(SHOP + "orders/1", "Status: Placed", "Ship to: Robin Lee, 12 Harbour Road, Portsmouth",
                            "Shipping: Standard (free)", "Total: $39.99"), cart_is({})),
          {"start": SHOP, "shop": {"cart": _cart(("KET-02", 1))}}, ("checkout",)),
    _task("shop", "checkout_express_coupon",
          "Order the cart for Sam Ortiz, 4 Elm Street, Leeds, with express shipping and the coupon SAVE10.",
          ["click('12')", "click('28')", "fill('21', 'Sam Ortiz')", "fill('23', '4 Elm Street, Leeds')",
           "select_option('25', 'Express ($9.99)')", "fill('29', 'SAVE10')", "click('30')"],
          page_shows(SHOP + "orders/1", "Status: Placed", "Ship to: Sam Ortiz, 4 Elm Street, Leeds",
                     "Shipping: Express ($9.99)", "Coupon: SAVE10", "Total: $54.09"),
          {"start": SHOP, "shop": {"cart": _cart(("LMP-03", 2))}}, ("checkout",)),
    _task("shop", "cancel_order", "Cancel order #2 and leave order #1 as it is.",
          ["click('14')", "click('21')", "click('25')"],
          all_of(page_shows(SHOP + "orders/2", "Status: Cancelled"), page_shows(SHOP + "orders/1", "Status: Placed")),
          {"start": SHOP, "shop": {"orders": _ORDERS}}, ("orders",)),
    _task("shop", "review_lamp", "Write a 4-star review of the desk lamp as Dana, saying 'Bright and sturdy.'",
          ["click('35')", "select_option('31', '4 stars')", "fill('38', 'Dana')", "fill('40', 'Bright and sturdy.')",
           "click('41')"],
          page_shows(SHOP + "product/3", "★★★★☆ Dana: Bright and sturdy.", absent=("No reviews yet.",)),
          {"start": SHOP}, ("reviews",)),
)

TRACKER_TASKS: tuple[Task, ...] = (
    _task("tracker", "new_issue",
          "File a new issue titled 'Search ignores accents' with the description 'Searching for café finds nothing.'",
          ["click('12')", "fill('19', 'Search ignores accents')", "fill('21', 'Searching for café finds nothing.')",
           "click('46')"],
          page_shows(TRACKER + "issues/6", "Search ignores accents #6", "Searching for café finds nothing.",
                     "Status: Open"),
          {"start": TRACKER}, ("create",)),
    _task("tracker", "new_bug_for_bob",
          "File a high-priority issue titled 'Avatar upload times out', labelled bug and assigned to bob.",
          ["click('12')", "fill('19', 'Avatar upload times out')", "select_option('23', 'High')",
           "select_option('28', 'bob')", "click('37')", "click('46')"],
          page_shows(TRACKER + "issues/6", "Avatar upload times out #6", "Priority: high", "Assignee: bob",
                     "Labels: bug"),
          {"start": TRACKER}, ("create", "labels")),
    _task("tracker", "close_issue", "Close issue #2.",
          ["click('39')", "click('60')"],
          all_of(page_shows(TRACKER + "issues/2", "Status: Closed"), page_shows(TRACKER + "issues/1", "Status: Open")),
          {"start": TRACKER}, ("state",)),
    _task("tracker", "reopen_crash", "Reopen the closed issue about the crash when saving an empty form.",
          ["select_option('19', 'Closed')", "click('33')", "click('37')", "click('60')"],
          page_shows(TRACKER + "issues/5", "Status: Open"), {"start": TRACKER}, ("state", "filter")),
    _task("tracker", "comment_login", "Comment 'Fixed in 2.4.' on the issue about login failures.",
          ["click('37')", "fill('31', 'Fixed in 2.4.')", "click('32')"],
          page_shows(TRACKER + "issues/1", pairs=(("commented:", "Fixed in 2.4."),)), {"start": TRACKER}, ("comments",)),
    _task("tracker", "assign_dave", "Assign issue #3 to dave.",
          ["click('41')", "select_option('39', 'dave')", "click('57')"],
          page_shows(TRACKER + "issues/3", "Assignee: dave", "Labels: docs"), {"start": TRACKER}, ("edit",)),
    _task("tracker", "raise_priority", "Raise the priority of the dark-mode issue to high.",
          ["click('39')", "select_option('34', 'High')", "click('57')"],
          page_shows(TRACKER + "issues/2", "Priority: high", "Labels: feature, ui"), {"start": TRACKER}, ("edit",)),
    _task("tracker", "add_ui_label", "Add the label 'ui' to issue #4 and keep its other labels.",
          ["click('43')", "click('56')", "click('57')"],
          page_shows(TRACKER + "issues/4", "Labels: feature, ui", "Assignee: carol"), {"start": TRACKER}, ("labels",)),
    _task("tracker", "create_label", "Create a red label named 'security'.",
          ["click('14')", "fill('41', 'security')", "select_option('43', 'red')", "click('51')"],
          page_shows(TRACKER + "labels", pairs=(("security", "(red, 0 issues)"),)), {"start": TRACKER}, ("labels",)),
    _task("tracker", "delete_label", "Delete the label 'duplicate'.",
          ["click('14')", "click('29')"],
          page_shows(TRACKER + "labels", "Delete bug", "Delete ui", absent=("Delete duplicate",)),
          {"start": TRACKER}, ("labels",)),
    _task("tracker", "close_duplicates", "Close every open issue labelled 'duplicate'.",
          ["select_option('24', 'duplicate')", "click('33')", "click('37')", "click('60')",
           "goto('http://tracker.test/issues/3')", "click('60')"],
          all_of(page_shows(TRACKER + "issues/2", "Status: Closed"), page_shows(TRACKER + "issues/3", "Status: Closed"),
                 page_shows(TRACKER + "issues/1", "Status: Open"), page_shows(TRACKER + "issues/4", "Status: Open")),
          {"start": TRACKER, "tracker": _DUPLICATES}, ("state", "filter")),
)

CROSS_TASKS: tuple[Task, ...] = (
    _task("cross", "report_damaged_order",
          "Order #1 in the shop arrived damaged. Keep the order open in its tab and, in a new tab, file a tracker "
          "issue titled 'Order #1 arrived damaged' whose description is the order's total as the shop shows it "
          "(like 'Total: $1.00'); then switch back to the shop's tab.",
          ["click('14')", "click('19')", "new_tab()", "goto('http://tracker.test/issues/new')",
           "fill('19', 'Order #1 arrived damaged')", "fill('21', 'Total: $25.00')", "click('46')", "tab_focus(0)"],
          page_shows(TRACKER + "issues/6", "Order #1 arrived damaged #6", "Total: $25.00"),
          {"start": SHOP, "shop": {"orders": [{"name": "Ana Diaz", "address": "3 Mill Lane, York",
                                               "items": [["MUG-01", 2]]}]}}, ("tabs",)),
)

SUITES: dict[str, tuple[Task, ...]] = {
    "shop": SHOP_TASKS,
    "tracker": TRACKER_TASKS,
    "cross": CROSS_TASKS,
    "all": SHOP_TASKS + TRACKER_TASKS + CROSS_TASKS,
}


def tasks_for(suite: str) -> list[Task]:
    return list(SUITES.get(suite, ()))
