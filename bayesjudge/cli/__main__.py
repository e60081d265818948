"""``python -m bayesjudge.cli``: the same as ``python -m bayesjudge``."""

from bayesjudge.cli import run

if __name__ == "__main__":
    run()
