"""Serve one shipped app for a person to look at: ``python -m awctl_domains.web.apps shop [--port N]``."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from . import APPS
from .base import AppServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("app", choices=sorted(APPS))
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = AppServer(args.port)
        server.swap(APPS[args.app](Path(tmp) / f"{args.app}.sqlite"))
        print(f"{args.app} on http://127.0.0.1:{server.port}/ (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.stop()


if __name__ == "__main__":
    main()
