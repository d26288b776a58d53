"""A shop server backed by SQLite: products with stock, orders that reserve stock, cancellations.

State: ``DATA/shop.sqlite``. Seed (``DATA/seed.json``)::

    {"products": [{"sku": "MUG-1", "name": "Mug", "price_cents": 899, "stock": 10}],
     "orders": [{"customer": "ana", "items": [{"sku": "MUG-1", "qty": 2}]}]}

Order ids count up from 1001 and nothing reads a clock, so the same seed and calls give the same bytes.
``get_order`` and ``create_order`` declare an outputSchema and return ``structuredContent``.
Run: ``python -m awctl_domains.mcp.servers.shop --data DIR``.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ._common import data_dir, dumps, load_seed, strict_server

SKU = Annotated[str, Field(pattern=r"^[A-Z0-9][A-Z0-9-]{0,31}$", description="product SKU, e.g. 'MUG-1'")]
FIRST_ORDER_ID = 1001
SCHEMA = """
CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL,
                       stock INTEGER NOT NULL CHECK (stock >= 0));
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL,
                          qty INTEGER NOT NULL, price_cents INTEGER NOT NULL, PRIMARY KEY (order_id, sku));
"""


class OrderLine(BaseModel):
    sku: str
    qty: int
    price_cents: int


class Order(BaseModel):
    """An order as ``get_order`` / ``create_order`` return it (also the tools' outputSchema)."""

    order_id: int
    customer: str
    status: Literal["placed", "shipped", "cancelled"]
    items: list[OrderLine]
    total_cents: int


class ItemRequest(BaseModel):
    sku: SKU
    qty: Annotated[int, Field(ge=1, le=100)]


class ShopError(Exception):
    """A business-rule failure; the tool wrappers turn it into an MCP ToolError."""


class ShopDb:
    """All reads and writes of the shop database; one connection per server process."""

    def __init__(self, root: Path) -> None:
        path = root / "shop.sqlite"
        fresh = not path.exists()
        # MCPServer runs sync tools on worker threads; ``lock`` (held by every tool) serialises them.
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.lock = threading.Lock()
        self.db.row_factory = sqlite3.Row
        if fresh:
            self._seed(load_seed(root))

    def _seed(self, seed: dict[str, Any]) -> None:
        self.db.executescript(SCHEMA)
        for p in seed.get("products", []):
            self.db.execute(
                "INSERT INTO products VALUES (?, ?, ?, ?)",
                (p["sku"], p["name"], p["price_cents"], p["stock"]),
            )
        for o in seed.get("orders", []):
            order_id = self.create_order(o["customer"], [ItemRequest(**i) for i in o["items"]])
            if o.get("status", "placed") != "placed":
                self.db.execute("UPDATE orders SET status = ? WHERE id = ?", (o["status"], order_id))

    def product(self, sku: str) -> sqlite3.Row:
        row = self.db.execute("SELECT * FROM products WHERE sku = ?", (sku,)).fetchone()
        if row is None:
            raise ShopError(f"unknown product: {sku}")
        return row

    def order(self, order_id: int) -> Order:
        row = self.db.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None:
            raise ShopError(f"unknown order: {order_id}")
        lines = [
            OrderLine(sku=r["sku"], qty=r["qty"], price_cents=r["price_cents"])
            for r in self.db.execute("SELECT * FROM order_items WHERE order_id = ? ORDER BY sku", (order_id,))
        ]
        return Order(
            order_id=row["id"],
            customer=row["customer"],
            status=row["status"],
            items=lines,
            total_cents=sum(line.qty * line.price_cents for line in lines),
        )

    def create_order(self, customer: str, items: list[ItemRequest]) -> int:
        if not items:
            raise ShopError("an order needs at least one item")
        if len({i.sku for i in items}) != len(items):
            raise ShopError("each SKU may appear once per order; add up the quantities")
        self.db.execute("BEGIN")
        try:
            for item in items:
                product = self.product(item.sku)
                if product["stock"] < item.qty:
                    raise ShopError(
                        f"insufficient stock for {item.sku}: {product['stock']} left, {item.qty} requested"
                    )
            next_id = self.db.execute(
                "SELECT COALESCE(MAX(id), ?) + 1 FROM orders", (FIRST_ORDER_ID - 1,)
            ).fetchone()[0]
            self.db.execute("INSERT INTO orders VALUES (?, ?, 'placed')", (next_id, customer))
            for item in items:
                price = self.product(item.sku)["price_cents"]
                self.db.execute(
                    "INSERT INTO order_items VALUES (?, ?, ?, ?)", (next_id, item.sku, item.qty, price)
                )
                self.db.execute("UPDATE products SET stock = stock - ? WHERE sku = ?", (item.qty, item.sku))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return int(next_id)


def build_server(root: Path) -> Any:
    """The shop ``MCPServer`` over the data folder ``root`` (database created from the seed on first use)."""
    from mcp.server.mcpserver.exceptions import ToolError

    shop = ShopDb(root)
    server = strict_server("awctl-shop", instructions="A small shop: products, stock and orders.")

    def guarded(fn: Any) -> Any:
        with shop.lock:
            try:
                return fn()
            except ShopError as exc:
                raise ToolError(str(exc)) from None

    @server.tool(structured_output=False)
    def list_products() -> str:
        """List all products as a JSON array of {sku, name, price_cents, stock}, sorted by SKU."""
        return guarded(
            lambda: dumps([dict(r) for r in shop.db.execute("SELECT * FROM products ORDER BY sku")])
        )

    @server.tool(structured_output=False)
    def get_product(sku: SKU) -> str:
        """One product as a JSON object {sku, name, price_cents, stock}."""
        return guarded(lambda: dumps(dict(shop.product(sku))))

    @server.tool(structured_output=True)
    def create_order(
        customer: Annotated[str, Field(min_length=1, max_length=64, description="customer handle")],
        items: Annotated[list[ItemRequest], Field(min_length=1, description="what to buy")],
    ) -> Order:
        """Place an order, reserving stock; fails (changing nothing) when any item lacks stock."""
        return guarded(lambda: shop.order(shop.create_order(customer, items)))

    @server.tool(structured_output=True)
    def get_order(order_id: Annotated[int, Field(ge=1, description="order id")]) -> Order:
        """One order with its lines and total."""
        return guarded(lambda: shop.order(order_id))

    @server.tool(structured_output=False)
    def list_orders(
        customer: Annotated[str | None, Field(description="only this customer's orders")] = None,
        status: Annotated[
            Literal["placed", "shipped", "cancelled"] | None, Field(description="only this status")
        ] = None,
    ) -> str:
        """List orders as a JSON array of {order_id, customer, status, total_cents}, by id."""

        def run() -> str:
            ids = [r["id"] for r in shop.db.execute("SELECT id FROM orders ORDER BY id")]
            orders = [shop.order(i) for i in ids]
            return dumps(
                [
                    {
                        "order_id": o.order_id,
                        "customer": o.customer,
                        "status": o.status,
                        "total_cents": o.total_cents,
                    }
                    for o in orders
                    if (customer is None or o.customer == customer) and (status is None or o.status == status)
                ]
            )

        return guarded(run)

    @server.tool(structured_output=False)
    def cancel_order(order_id: Annotated[int, Field(ge=1)]) -> str:
        """Cancel a placed order and return its items to stock; shipped or cancelled orders cannot be."""

        def run() -> str:
            order = shop.order(order_id)
            if order.status != "placed":
                raise ShopError(f"order {order_id} is {order.status} and cannot be cancelled")
            shop.db.execute("BEGIN")
            for line in order.items:
                shop.db.execute("UPDATE products SET stock = stock + ? WHERE sku = ?", (line.qty, line.sku))
            shop.db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
            shop.db.execute("COMMIT")
            return f"cancelled order {order_id}; restocked {sum(li.qty for li in order.items)} item(s)"

        return guarded(run)

    @server.tool(structured_output=False)
    def ship_order(order_id: Annotated[int, Field(ge=1)]) -> str:
        """Mark a placed order as shipped."""

        def run() -> str:
            order = shop.order(order_id)
            if order.status != "placed":
                raise ShopError(f"order {order_id} is {order.status}, only placed orders ship")
            shop.db.execute("UPDATE orders SET status = 'shipped' WHERE id = ?", (order_id,))
            return f"shipped order {order_id}"

        return guarded(run)

    @server.tool(structured_output=False)
    def restock(sku: SKU, qty: Annotated[int, Field(ge=1, le=10000)]) -> str:
        """Add units to a product's stock; returns the new stock level."""

        def run() -> str:
            shop.product(sku)
            shop.db.execute("UPDATE products SET stock = stock + ? WHERE sku = ?", (qty, sku))
            return f"{sku} stock is now {shop.product(sku)['stock']}"

        return guarded(run)

    return server


def main(argv: list[str] | None = None) -> None:
    build_server(data_dir(argv if argv is not None else sys.argv[1:])).run()


if __name__ == "__main__":
    main()
