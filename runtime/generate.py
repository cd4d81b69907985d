"""``python -m runtime.generate``: generate text with a model, no server (``runtime/engine/offline.py``)."""

import sys

from runtime.engine.offline import main

if __name__ == "__main__":
    sys.exit(main())
