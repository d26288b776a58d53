"""Acme Shop: products with search and categories, a cart, checkout with coupons and shipping, orders that
can be cancelled, and product reviews. Served as ``http://shop.test/``.

Pages: ``/`` (catalogue, ``?q=`` search, ``?category=`` filter), ``/product/<id>`` (details, add to cart,
reviews and a review form), ``/cart`` (quantities, remove), ``/checkout``, ``/orders``, ``/orders/<id>``
(cancel). A task's ``setup["shop"]`` may give ``products`` (replacing the catalogue), ``cart``
(``[{"sku": .., "qty": ..}]``), ``orders`` (``[{"name", "address", "items": [[sku, qty]], "status",
"shipping", "coupon"}]``), ``reviews`` (``[{"sku", "rating", "author", "body"}]``) and ``coupons``
(``{"CODE": percent}``).
"""

from __future__ import annotations

from typing import Any

from .base import App, E, Request, Response, money, not_found, options, page, redirect

PRODUCTS: list[dict[str, Any]] = [
    {"sku": "MUG-01", "name": "Ceramic mug", "category": "Kitchen", "price": 1250, "stock": 40,
     "description": "A 350 ml stoneware mug, dishwasher safe."},
    {"sku": "KET-02", "name": "Electric kettle", "category": "Kitchen", "price": 3999, "stock": 12,
     "description": "1.7 litre kettle with auto shut-off."},
    {"sku": "LMP-03", "name": "Desk lamp", "category": "Home office", "price": 2450, "stock": 18,
     "description": "LED desk lamp with three brightness levels."},
    {"sku": "CHR-04", "name": "Office chair", "category": "Home office", "price": 14900, "stock": 5,
     "description": "Mesh back, adjustable height."},
    {"sku": "NTB-05", "name": "Dotted notebook", "category": "Stationery", "price": 890, "stock": 60,
     "description": "A5, 160 pages, dotted grid."},
    {"sku": "PEN-06", "name": "Gel pen set", "category": "Stationery", "price": 650, "stock": 75,
     "description": "Ten colours, 0.5 mm."},
    {"sku": "BTL-07", "name": "Water bottle", "category": "Outdoor", "price": 1800, "stock": 25,
     "description": "750 ml insulated steel bottle."},
    {"sku": "TNT-08", "name": "Camping tent", "category": "Outdoor", "price": 8900, "stock": 0,
     "description": "Two-person tent (sold out)."},
]
COUPONS = {"SAVE10": 10, "WELCOME5": 5}
SHIPPING = {"standard": ("Standard (free)", 0), "express": ("Express ($9.99)", 999)}


class ShopApp(App):
    name = "shop"
    host = "shop.test"
    title = "Acme Shop"
    schema = """
    CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT UNIQUE, name TEXT, category TEXT, price INTEGER,
                           stock INTEGER, description TEXT);
    CREATE TABLE cart (product_id INTEGER PRIMARY KEY, qty INTEGER);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, name TEXT, address TEXT, shipping TEXT, coupon TEXT,
                         total INTEGER, status TEXT);
    CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER, price INTEGER);
    CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER, rating INTEGER, author TEXT, body TEXT);
    CREATE TABLE coupons (code TEXT PRIMARY KEY, percent INTEGER);
    """

    # ── data ──
    def seed(self, setup: dict[str, Any]) -> None:
        for p in setup.get("products", PRODUCTS):
            self.x("INSERT INTO products (sku, name, category, price, stock, description) VALUES (?,?,?,?,?,?)",
                   p["sku"], p["name"], p["category"], p["price"], p.get("stock", 10), p.get("description", ""))
        for code, pct in setup.get("coupons", COUPONS).items():
            self.x("INSERT INTO coupons VALUES (?, ?)", code, pct)
        for item in setup.get("cart", []):
            self.x("INSERT INTO cart VALUES (?, ?)", self._pid(item["sku"]), item["qty"])
        for order in setup.get("orders", []):
            items = [(self._pid(sku), qty) for sku, qty in order["items"]]
            self._place(order["name"], order["address"], order.get("shipping", "standard"),
                        order.get("coupon", ""), items, order.get("status", "placed"))
        for r in setup.get("reviews", []):
            self.x("INSERT INTO reviews (product_id, rating, author, body) VALUES (?,?,?,?)",
                   self._pid(r["sku"]), r["rating"], r["author"], r["body"])

    def _pid(self, sku: str) -> int:
        row = self.one("SELECT id FROM products WHERE sku = ?", sku)
        if row is None:
            raise ValueError(f"shop setup names unknown sku {sku!r}")
        return int(row["id"])

    def _place(self, name: str, address: str, shipping: str, coupon: str, items: list[tuple[int, int]],
               status: str = "placed") -> int:
        subtotal = 0
        priced = []
        for pid, qty in items:
            price = int(self.one("SELECT price FROM products WHERE id = ?", pid)["price"])  # type: ignore[index]
            subtotal += price * qty
            priced.append((pid, qty, price))
        pct = self.one("SELECT percent FROM coupons WHERE code = ?", coupon) if coupon else None
        discount = subtotal * int(pct["percent"]) // 100 if pct else 0
        total = subtotal - discount + SHIPPING[shipping][1]
        oid = self.x("INSERT INTO orders (name, address, shipping, coupon, total, status) VALUES (?,?,?,?,?,?)",
                     name, address, shipping, coupon, total, status)
        for pid, qty, price in priced:
            self.x("INSERT INTO order_items VALUES (?,?,?,?)", oid, pid, qty, price)
        return oid

    def _cart(self) -> list[Any]:
        return self.q("SELECT p.*, c.qty FROM cart c JOIN products p ON p.id = c.product_id ORDER BY p.id")

    def _page(self, title: str, body: str) -> Response:
        count = sum(int(r["qty"]) for r in self._cart())
        nav = [("Home", "/"), (f"Cart ({count})", "/cart"), ("Orders", "/orders")]
        return Response(page(f"{title} - Acme Shop" if title else "Acme Shop", body, nav, "Acme Shop"))

    # ── routes ──
    def register(self) -> None:
        self.route("GET", "/", self.home)
        self.route("GET", r"/product/(\d+)", self.product)
        self.route("POST", r"/product/(\d+)/review", self.review)
        self.route("GET", "/cart", self.cart)
        self.route("POST", "/cart/add", self.cart_add)
        self.route("POST", "/cart/update", self.cart_update)
        self.route("POST", "/cart/remove", self.cart_remove)
        self.route("GET", "/checkout", self.checkout)
        self.route("POST", "/checkout", self.checkout_post)
        self.route("GET", "/orders", self.orders)
        self.route("GET", r"/orders/(\d+)", self.order)
        self.route("POST", r"/orders/(\d+)/cancel", self.order_cancel)

    def home(self, req: Request) -> Response:
        q, category = req.get("q").strip(), req.get("category")
        sql, args = "SELECT * FROM products WHERE 1=1", []
        if q:
            sql += " AND (name LIKE ? OR description LIKE ?)"
            args += [f"%{q}%", f"%{q}%"]
        if category:
            sql += " AND category = ?"
            args.append(category)
        rows = self.q(sql + " ORDER BY id", *args)
        cats = [(c["category"], c["category"]) for c in self.q("SELECT DISTINCT category FROM products ORDER BY 1")]
        items = "".join(
            f'<li><a href="/product/{r["id"]}">{E(r["name"])}</a> {money(r["price"])}'
            f'{" (sold out)" if r["stock"] <= 0 else ""}</li>' for r in rows)
        found = f"<p>{len(rows)} product{'s' if len(rows) != 1 else ''} found</p>"
        body = (f"<h1>Products</h1>"
                f'<form method="get" action="/" role="search">'
                f'<label for="q">Search products</label><input id="q" name="q" type="search" value="{E(q)}">'
                f'<label for="category">Category</label><select id="category" name="category">'
                f'{options([("", "All categories"), *cats], category)}</select>'
                f'<button type="submit">Search</button></form>'
                f"{found}<ul>{items}</ul>")
        return self._page("", body)

    def product(self, req: Request, pid: str, error: str = "") -> Response:
        p = self.one("SELECT * FROM products WHERE id = ?", int(pid))
        if p is None:
            return not_found("product")
        reviews = self.q("SELECT * FROM reviews WHERE product_id = ? ORDER BY id", p["id"])
        listed = "".join(f"<li>{'★' * r['rating']}{'☆' * (5 - r['rating'])} {E(r['author'])}: {E(r['body'])}</li>"
                         for r in reviews) or "<li>No reviews yet.</li>"
        buy = ('<p>Sold out.</p>' if p["stock"] <= 0 else
               f'<form method="post" action="/cart/add"><input type="hidden" name="product" value="{p["id"]}">'
               f'<label for="qty">Quantity</label><input id="qty" name="qty" type="number" min="1" value="1">'
               f'<button type="submit">Add to cart</button></form>')
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        body = (f'<h1>{E(p["name"])}</h1><p>Price: {money(p["price"])}</p><p>In stock: {p["stock"]}</p>'
                f'<p>{E(p["description"])}</p>{buy}'
                f"<section><h2>Reviews</h2><ul>{listed}</ul>{alert}"
                f'<form method="post" action="/product/{p["id"]}/review">'
                f'<label for="rating">Rating</label><select id="rating" name="rating">'
                f'{options([(str(n), f"{n} stars") for n in range(5, 0, -1)], "5")}</select>'
                f'<label for="author">Your name</label><input id="author" name="author">'
                f'<label for="body">Review</label><textarea id="body" name="body"></textarea>'
                f'<button type="submit">Submit review</button></form></section>')
        return self._page(p["name"], body)

    def review(self, req: Request, pid: str) -> Response:
        author, text = req.get("author").strip(), req.get("body").strip()
        if not author or not text:
            resp = self.product(req, pid, "Please enter your name and a review.")
            resp.status = 422
            return resp
        rating = min(5, max(1, int(req.get("rating") or 5)))
        self.x("INSERT INTO reviews (product_id, rating, author, body) VALUES (?,?,?,?)", int(pid), rating, author, text)
        return redirect(f"/product/{int(pid)}")

    def cart(self, req: Request, error: str = "") -> Response:
        rows = self._cart()
        if not rows:
            return self._page("Cart", "<h1>Your cart</h1><p>Your cart is empty.</p>")
        lines = "".join(
            f'<li><span>{E(r["name"])}</span> {money(r["price"])} each '
            f'<label for="qty-{r["id"]}">Quantity of {E(r["name"])}</label>'
            f'<input id="qty-{r["id"]}" name="qty-{r["id"]}" type="number" min="0" value="{r["qty"]}" '
            f'form="update"> <button type="submit" name="product" value="{r["id"]}" form="remove">'
            f'Remove {E(r["name"])}</button></li>' for r in rows)
        total = sum(int(r["price"]) * int(r["qty"]) for r in rows)
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        body = (f"<h1>Your cart</h1>{alert}<ul>{lines}</ul><p>Subtotal: {money(total)}</p>"
                f'<form id="update" method="post" action="/cart/update"><button type="submit">Update cart</button>'
                f'</form><form id="remove" method="post" action="/cart/remove"></form>'
                f'<p><a href="/checkout">Proceed to checkout</a></p>')
        return self._page("Cart", body)

    def cart_add(self, req: Request) -> Response:
        p = self.one("SELECT * FROM products WHERE id = ?", int(req.get("product") or 0))
        if p is None:
            return not_found("product")
        try:
            qty = int(req.get("qty") or 1)
        except ValueError:
            qty = 0
        have = self.one("SELECT qty FROM cart WHERE product_id = ?", p["id"])
        total = qty + (int(have["qty"]) if have else 0)
        if qty < 1 or total > p["stock"]:
            resp = self.product(req, str(p["id"]))
            resp.body = resp.body.replace('<section>', f'<p role="alert">Cannot add {qty}: only {p["stock"]} '
                                          f'in stock.</p><section>', 1)
            resp.status = 422
            return resp
        self.x("INSERT INTO cart VALUES (?, ?) ON CONFLICT(product_id) DO UPDATE SET qty = ?", p["id"], total, total)
        return redirect("/cart")

    def cart_update(self, req: Request) -> Response:
        for r in self._cart():
            raw = req.get(f"qty-{r['id']}", str(r["qty"]))
            try:
                qty = int(raw)
            except ValueError:
                return self.cart(req, f"Quantity of {r['name']} must be a number.")
            if qty <= 0:
                self.x("DELETE FROM cart WHERE product_id = ?", r["id"])
            elif qty > r["stock"]:
                return self.cart(req, f"Only {r['stock']} of {r['name']} in stock.")
            else:
                self.x("UPDATE cart SET qty = ? WHERE product_id = ?", qty, r["id"])
        return redirect("/cart")

    def cart_remove(self, req: Request) -> Response:
        self.x("DELETE FROM cart WHERE product_id = ?", int(req.get("product") or 0))
        return redirect("/cart")

    def checkout(self, req: Request, error: str = "", values: dict[str, str] | None = None) -> Response:
        rows = self._cart()
        if not rows:
            return self._page("Checkout", "<h1>Checkout</h1><p>Your cart is empty.</p>")
        v = values or {}
        summary = "".join(f"<li>{r['qty']} × {E(r['name'])}</li>" for r in rows)
        alert = f'<p role="alert">{E(error)}</p>' if error else ""
        ship = [(k, label) for k, (label, _) in SHIPPING.items()]
        body = (f"<h1>Checkout</h1><ul>{summary}</ul>{alert}"
                f'<form method="post" action="/checkout">'
                f'<label for="name">Full name</label><input id="name" name="name" value="{E(v.get("name", ""))}">'
                f'<label for="address">Shipping address</label><textarea id="address" name="address">'
                f'{E(v.get("address", ""))}</textarea>'
                f'<label for="shipping">Shipping method</label><select id="shipping" name="shipping">'
                f'{options(ship, v.get("shipping", "standard"))}</select>'
                f'<label for="coupon">Coupon code</label><input id="coupon" name="coupon" value="{E(v.get("coupon", ""))}">'
                f'<button type="submit">Place order</button></form>')
        return self._page("Checkout", body)

    def checkout_post(self, req: Request) -> Response:
        values = {k: req.get(k).strip() for k in ("name", "address", "shipping", "coupon")}
        rows = self._cart()
        error = ""
        if not rows:
            error = "Your cart is empty."
        elif not values["name"] or not values["address"]:
            error = "Please enter your full name and a shipping address."
        elif values["shipping"] not in SHIPPING:
            error = "Please choose a shipping method."
        elif values["coupon"] and not self.one("SELECT 1 FROM coupons WHERE code = ?", values["coupon"].upper()):
            error = f"The coupon code {values['coupon']} is not valid."
        if error:
            resp = self.checkout(req, error, values)
            resp.status = 422
            return resp
        oid = self._place(values["name"], values["address"], values["shipping"], values["coupon"].upper(),
                          [(int(r["id"]), int(r["qty"])) for r in rows])
        for r in rows:
            self.x("UPDATE products SET stock = stock - ? WHERE id = ?", r["qty"], r["id"])
        self.x("DELETE FROM cart")
        return redirect(f"/orders/{oid}")

    def orders(self, req: Request) -> Response:
        rows = self.q("SELECT * FROM orders ORDER BY id")
        items = "".join(f'<li><a href="/orders/{o["id"]}">Order #{o["id"]}</a> {money(o["total"])} '
                        f'{E(o["status"].capitalize())}</li>' for o in rows)
        body = f"<h1>Your orders</h1>{f'<ul>{items}</ul>' if rows else '<p>You have no orders yet.</p>'}"
        return self._page("Orders", body)

    def order(self, req: Request, oid: str) -> Response:
        o = self.one("SELECT * FROM orders WHERE id = ?", int(oid))
        if o is None:
            return not_found("order")
        items = self.q("SELECT p.name, i.qty, i.price FROM order_items i JOIN products p ON p.id = i.product_id "
                       "WHERE i.order_id = ? ORDER BY p.id", o["id"])
        lines = "".join(f"<li>{i['qty']} × {E(i['name'])} at {money(i['price'])}</li>" for i in items)
        cancel = (f'<form method="post" action="/orders/{o["id"]}/cancel"><button type="submit">Cancel order'
                  f"</button></form>" if o["status"] == "placed" else "")
        body = (f'<h1>Order #{o["id"]}</h1><p>Status: {E(o["status"].capitalize())}</p><ul>{lines}</ul>'
                f'<p>Ship to: {E(o["name"])}, {E(o["address"])}</p>'
                f'<p>Shipping: {E(SHIPPING[o["shipping"]][0])}</p>'
                f'<p>Coupon: {E(o["coupon"] or "none")}</p><p>Total: {money(o["total"])}</p>{cancel}')
        return self._page(f"Order #{o['id']}", body)

    def order_cancel(self, req: Request, oid: str) -> Response:
        o = self.one("SELECT * FROM orders WHERE id = ?", int(oid))
        if o is None:
            return not_found("order")
        if o["status"] == "placed":
            self.x("UPDATE orders SET status = 'cancelled' WHERE id = ?", o["id"])
            for i in self.q("SELECT * FROM order_items WHERE order_id = ?", o["id"]):
                self.x("UPDATE products SET stock = stock + ? WHERE id = ?", i["qty"], i["product_id"])
        return redirect(f"/orders/{o['id']}")
