"""``python -m bayesjudge``: the ``bayesjudge`` command (see :mod:`bayesjudge.cli`)."""

from bayesjudge.cli import run

if __name__ == "__main__":
    run()
