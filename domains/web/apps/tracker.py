"""Bugsy, an issue tracker: issues with state, priority, assignee and labels, comments, and a label manager.
Served as ``http://tracker.test/``.

Pages: ``/`` (issue list; ``?state=open|closed|all``, ``?label=``, ``?q=``), ``/issues/new``,
``/issues/<id>`` (details, comments, a comment form, an edit form, close/reopen), ``/labels`` (create,
delete). A task's ``setup["tracker"]`` may give ``issues`` (``[{"title", "body", "state", "priority",
"assignee", "labels": [..], "comments": [[author, body]]}]``, replacing the default issues), ``labels``
(``[[name, color]]``, replacing the default labels) and ``users``.
"""

from __future__ import annotations

from typing import Any

from .base import App, E, Request, Response, not_found, options, page, redirect

USERS = ["alice", "bob", "carol", "dave"]
LABELS = [("bug", "red"), ("feature", "blue"), ("ui", "purple"), ("docs", "green"), ("duplicate", "grey")]
COLORS = ["red", "orange", "yellow", "green", "blue", "purple", "grey"]
PRIORITIES = ["low", "medium", "high"]
ISSUES: list[dict[str, Any]] = [
    {"title": "Login fails with long passwords", "body": "Passwords over 64 characters are rejected.",
     "priority": "high", "assignee": "alice", "labels": ["bug"], "comments": [["bob", "Reproduced on 2.3."]]},
    {"title": "Add dark mode", "body": "Users ask for a dark theme.", "priority": "medium", "labels": ["feature", "ui"]},
    {"title": "Typo on the pricing page", "body": "'Anual' should read 'Annual'.", "priority": "low",
     "labels": ["docs"]},
    {"title": "Export to CSV", "body": "Allow exporting the issue list as CSV.", "priority": "medium",
     "assignee": "carol", "labels": ["feature"]},
    {"title": "Crash when saving an empty form", "body": "Saving the settings form with no values crashes.",
     "priority": "high", "labels": ["bug"], "state": "closed"},
]


class TrackerApp(App):
    name = "tracker"
    host = "tracker.test"
    title = "Bugsy"
    schema = """
    CREATE TABLE issues (id INTEGER PRIMARY KEY, title TEXT, body TEXT, state TEXT, priority TEXT, assignee TEXT);
    CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT UNIQUE, color TEXT);
    CREATE TABLE issue_labels (issue_id INTEGER, label_id INTEGER, PRIMARY KEY (issue_id, label_id));
    CREATE TABLE comments (id INTEGER PRIMARY KEY, issue_id INTEGER, author TEXT, body TEXT);
    CREATE TABLE users (name TEXT PRIMARY KEY);
    """

    def seed(self, setup: dict[str, Any]) -> None:
        for user in setup.get("users", USERS):
            self.x("INSERT INTO users VALUES (?)", user)
        for name, color in setup.get("labels", LABELS):
            self.x("INSERT INTO labels (name, color) VALUES (?, ?)", name, color)
        for issue in setup.get("issues", ISSUES):
            iid = self.x("INSERT INTO issues (title, body, state, priority, assignee) VALUES (?,?,?,?,?)",
                         issue["title"], issue.get("body", ""), issue.get("state", "open"),
                         issue.get("priority", "medium"), issue.get("assignee"))
            self._set_labels(iid, issue.get("labels", []))
            for author, body in issue.get("comments", []):
                self.x("INSERT INTO comments (issue_id, author, body) VALUES (?,?,?)", iid, author, body)

    def _set_labels(self, iid: int, names: list[str]) -> None:
        self.x("DELETE FROM issue_labels WHERE issue_id = ?", iid)
        for name in names:
            row = self.one("SELECT id FROM labels WHERE name = ?", name)
            if row is None:
                raise ValueError(f"tracker setup names unknown label {name!r}")
            self.x("INSERT INTO issue_labels VALUES (?, ?)", iid, row["id"])

    def _labels_of(self, iid: int) -> list[str]:
        return [r["name"] for r in self.q("SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label_id "
                                          "WHERE il.issue_id = ? ORDER BY l.name", iid)]

    def _page(self, title: str, body: str) -> Response:
        nav = [("Issues", "/"), ("New issue", "/issues/new"), ("Labels", "/labels")]
        return Response(page(f"{title} · Bugsy" if title else "Bugsy", body, nav, "Bugsy issue tracker"))

    def _label_boxes(self, checked: list[str]) -> str:
        boxes = "".join(
            f'<label><input type="checkbox" name="label" value="{E(r["name"])}"'
            f'{" checked" if r["name"] in checked else ""}> {E(r["name"])}</label>'
            for r in self.q("SELECT name FROM labels ORDER BY name"))
        return f"<fieldset><legend>Labels</legend>{boxes}</fieldset>"

    def _users(self) -> list[tuple[str, str]]:
        return [("", "Unassigned")] + [(r["name"], r["name"]) for r in self.q("SELECT name FROM users ORDER BY 1")]

    def register(self) -> None:
        self.route("GET", "/", self.index)
        self.route("GET", "/issues/new", self.new_issue)
        self.route("POST", "/issues", self.create_issue)
        self.route("GET", r"/issues/(\d+)", self.issue)
        self.route("POST", r"/issues/(\d+)/comment", self.comment)
        self.route("POST", r"/issues/(\d+)/update", self.update)
        self.route("POST", r"/issues/(\d+)/state", self.set_state)
        self.route("GET", "/labels", self.labels)
        self.route("POST", "/labels", self.create_label)
        self.route("POST", r"/labels/(\d+)/delete", self.delete_label)

    def index(self, req: Request) -> Response:
        state, label, q = req.get("state", "open") or "open", req.get("label"), req.get("q").strip()
        sql, args = "SELECT * FROM issues WHERE 1=1", []
        if state in ("open", "closed"):
            sql += " AND state = ?"
            args.append(state)
        if label:
            sql += " AND id IN (SELECT il.issue_id FROM issue_labels il JOIN labels l ON l.id = il.label_id " \
                   "WHERE l.name = ?)"
            args.append(label)
        if q:
            sql += " AND (title LIKE ? OR body LIKE ?)"
            args += [f"%{q}%", f"%{q}%"]
        rows = self.q(sql + " ORDER BY id", *args)
        items = "".join(
            f'<li><a href="/issues/{r["id"]}">#{r["id"]} {E(r["title"])}</a> '
            f'{E(r["state"].capitalize())}, {E(r["priority"])} priority'
            f'{"".join(f", {E(n)}" for n in self._labels_of(r["id"]))}</li>' for r in rows)
        labels = [("", "Any label")] + [(r["name"], r["name"]) for r in self.q("SELECT name FROM labels ORDER BY 1")]
        body = (f"<h1>Issues</h1>"
                f'<form method="get" action="/" role="search">'
                f'<label for="state">State</label><select id="state" name="state">'
                f'{options([("open", "Open"), ("closed", "Closed"), ("all", "All")], state)}</select>'
                f'<label for="label">Label</label><select id="label" name="label">{options(labels, label)}</select>'
                f'<label for="q">Search issues</label><input id="q" name="q" type="search" value="{E(q)}">'
                f'<button type="submit">Filter</button></form>'
                f"<p>{len(rows)} issue{'s' if len(rows) != 1 else ''}</p>"
                f"{f'<ul>{items}</ul>' if rows else ''}")
        return self._page("Issues", body)

    def new_issue(self, req: Request, error: str = "") -> Response:
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        body = (f"<h1>New issue</h1>{alert}<form method=\"post\" action=\"/issues\">"
                f'<label for="title">Title</label><input id="title" name="title" value="{E(req.get("title"))}">'
                f'<label for="body">Description</label><textarea id="body" name="body">{E(req.get("body"))}</textarea>'
                f'<label for="priority">Priority</label><select id="priority" name="priority">'
                f'{options([(p, p.capitalize()) for p in PRIORITIES], req.get("priority") or "medium")}</select>'
                f'<label for="assignee">Assignee</label><select id="assignee" name="assignee">'
                f'{options(self._users(), req.get("assignee"))}</select>'
                f'{self._label_boxes(req.form.get("label", []))}'
                f'<button type="submit">Create issue</button></form>')
        return self._page("New issue", body)

    def create_issue(self, req: Request) -> Response:
        title = req.get("title").strip()
        if not title:
            resp = self.new_issue(req, "The title can't be blank.")
            resp.status = 422
            return resp
        priority = req.get("priority") if req.get("priority") in PRIORITIES else "medium"
        iid = self.x("INSERT INTO issues (title, body, state, priority, assignee) VALUES (?,?,?,?,?)",
                     title, req.get("body").strip(), "open", priority, req.get("assignee") or None)
        self._set_labels(iid, [n for n in req.form.get("label", []) if self.one("SELECT 1 FROM labels WHERE name=?", n)])
        return redirect(f"/issues/{iid}")

    def issue(self, req: Request, iid: str, error: str = "") -> Response:
        i = self.one("SELECT * FROM issues WHERE id = ?", int(iid))
        if i is None:
            return not_found("issue")
        labels = self._labels_of(i["id"])
        comments = self.q("SELECT * FROM comments WHERE issue_id = ? ORDER BY id", i["id"])
        listed = "".join(f'<li><p><b>{E(c["author"])}</b> commented:</p><p>{E(c["body"])}</p></li>'
                         for c in comments) or "<li>No comments yet.</li>"
        closed = i["state"] == "closed"
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        body = (f'<h1>{E(i["title"])} #{i["id"]}</h1>'
                f'<p>Status: {E(i["state"].capitalize())}</p><p>Priority: {E(i["priority"])}</p>'
                f'<p>Assignee: {E(i["assignee"] or "nobody")}</p><p>Labels: {E(", ".join(labels) or "none")}</p>'
                f'<p>{E(i["body"] or "No description.")}</p>'
                f"<section><h2>Comments</h2><ul>{listed}</ul>{alert}"
                f'<form method="post" action="/issues/{i["id"]}/comment">'
                f'<label for="comment">Comment</label><textarea id="comment" name="comment"></textarea>'
                f'<button type="submit">Comment</button></form></section>'
                f'<section><h2>Edit</h2><form method="post" action="/issues/{i["id"]}/update">'
                f'<label for="priority">Priority</label><select id="priority" name="priority">'
                f'{options([(p, p.capitalize()) for p in PRIORITIES], i["priority"])}</select>'
                f'<label for="assignee">Assignee</label><select id="assignee" name="assignee">'
                f'{options(self._users(), i["assignee"] or "")}</select>'
                f'{self._label_boxes(labels)}<button type="submit">Save changes</button></form>'
                f'<form method="post" action="/issues/{i["id"]}/state">'
                f'<input type="hidden" name="state" value="{"open" if closed else "closed"}">'
                f'<button type="submit">{"Reopen issue" if closed else "Close issue"}</button></form></section>')
        return self._page(f"{i['title']} #{i['id']}", body)

    def comment(self, req: Request, iid: str) -> Response:
        if self.one("SELECT 1 FROM issues WHERE id = ?", int(iid)) is None:
            return not_found("issue")
        text = req.get("comment").strip()
        if not text:
            resp = self.issue(req, iid, "The comment can't be blank.")
            resp.status = 422
            return resp
        self.x("INSERT INTO comments (issue_id, author, body) VALUES (?,?,?)", int(iid), "you", text)
        return redirect(f"/issues/{int(iid)}")

    def update(self, req: Request, iid: str) -> Response:
        i = self.one("SELECT * FROM issues WHERE id = ?", int(iid))
        if i is None:
            return not_found("issue")
        priority = req.get("priority") if req.get("priority") in PRIORITIES else i["priority"]
        self.x("UPDATE issues SET priority = ?, assignee = ? WHERE id = ?", priority, req.get("assignee") or None,
               i["id"])
        self._set_labels(i["id"], [n for n in req.form.get("label", [])
                                   if self.one("SELECT 1 FROM labels WHERE name = ?", n)])
        return redirect(f"/issues/{i['id']}")

    def set_state(self, req: Request, iid: str) -> Response:
        state = req.get("state")
        if state in ("open", "closed"):
            self.x("UPDATE issues SET state = ? WHERE id = ?", state, int(iid))
        return redirect(f"/issues/{int(iid)}")

    def labels(self, req: Request, error: str = "") -> Response:
        rows = self.q("SELECT l.*, (SELECT COUNT(*) FROM issue_labels il WHERE il.label_id = l.id) AS n "
                      "FROM labels l ORDER BY name")
        items = "".join(
            f'<li><span>{E(r["name"])}</span> ({E(r["color"])}, {r["n"]} issue{"s" if r["n"] != 1 else ""}) '
            f'<form method="post" action="/labels/{r["id"]}/delete"><button type="submit">Delete {E(r["name"])}'
            f"</button></form></li>" for r in rows)
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        body = (f"<h1>Labels</h1><ul>{items}</ul>{alert}<h2>New label</h2>"
                f'<form method="post" action="/labels"><label for="name">Label name</label>'
                f'<input id="name" name="name"><label for="color">Color</label><select id="color" name="color">'
                f'{options([(c, c) for c in COLORS], "grey")}</select><button type="submit">Create label</button>'
                f"</form>")
        return self._page("Labels", body)

    def create_label(self, req: Request) -> Response:
        name, color = req.get("name").strip().lower(), req.get("color")
        error = ""
        if not name:
            error = "The label name can't be blank."
        elif self.one("SELECT 1 FROM labels WHERE name = ?", name):
            error = f"A label named {name} already exists."
        if error:
            resp = self.labels(req, error)
            resp.status = 422
            return resp
        self.x("INSERT INTO labels (name, color) VALUES (?, ?)", name, color if color in COLORS else "grey")
        return redirect("/labels")

    def delete_label(self, req: Request, lid: str) -> Response:
        self.x("DELETE FROM issue_labels WHERE label_id = ?", int(lid))
        self.x("DELETE FROM labels WHERE id = ?", int(lid))
        return redirect("/labels")
