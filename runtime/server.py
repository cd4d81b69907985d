"""``python -m runtime.server``: one model behind a small HTTP API (``runtime/serving/server.py``)."""

import sys

from runtime.serving.server import main

if __name__ == "__main__":
    sys.exit(main())
