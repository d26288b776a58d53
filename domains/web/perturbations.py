"""Faults a web simulator can be asked to inject (added to the simulation instruction)."""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "slow_page",
        "The next page has not finished loading.",
        "The page the agent's next navigation opens is still loading: the tabs show its URL with the title "
        "{title!r}, and the accessibility tree shows only `RootWebArea {title!r}, busy=1` without content. "
        "The content appears once the agent waits (noop) or acts again.",
        {"title": "Loading…"},
    ),
    Perturbation(
        "not_found",
        "A page is missing on the server.",
        "Opening any URL under {path} returns the server's 404 page: title 'Not found', a heading 'Not found' "
        "and the text 'No such page.', with the URL unchanged in the tab list.",
        {"path": "/orders/"},
    ),
    Perturbation(
        "validation_error",
        "A form rejects its input.",
        "The next form the agent submits is rejected by server-side validation: the same page comes back "
        "with the fields still filled in and an alert `{message}` above the form; nothing is saved.",
        {"message": "Please correct the highlighted fields."},
    ),
    Perturbation(
        "session_expired",
        "The user's session ended.",
        "The session has expired: the next page the agent opens is a sign-in page (title 'Sign in', "
        "textboxes 'Username' and 'Password', a button 'Sign in') at {url}, and the agent's unsaved "
        "changes are lost.",
        {"url": "http://shop.test/login"},
    ),
    Perturbation(
        "server_error",
        "The application fails.",
        "The next form submission fails with the server's error page: title 'Server error', a heading "
        "'Server error' and the text {message!r}; nothing is saved.",
        {"message": "database is locked"},
    ),
    Perturbation(
        "element_detached",
        "The page re-renders before the action lands.",
        "The element the agent acts on next has just been replaced: the action fails with the error "
        "'TimeoutError: Timeout {timeout}ms exceeded.' and the page is shown again with fresh bids for the "
        "replaced elements.",
        {"timeout": 3000},
    ),
    Perturbation(
        "popup_tab",
        "A link opens in a new tab.",
        "The next link the agent clicks opens in a new tab, which becomes the active one; the original tab "
        "stays open, unchanged, at its index.",
    ),
)
