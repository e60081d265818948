"""``python -m bayesjudge``: the ``bayesjudge`` command (see :mod:`bayesjudge.cli`)."""

import sys

from bayesjudge.cli import main

if __name__ == "__main__":
    sys.exit(main())
