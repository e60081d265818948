"""``python -m bayesjudge.cli``: the same as ``python -m bayesjudge``."""

import sys

from bayesjudge.cli import main

if __name__ == "__main__":
    sys.exit(main())
