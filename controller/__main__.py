"""Entry point of the `dynamo-operator` console script."""

import sys


def main() -> int:
    """Run the operator (not built yet: see the open issues)."""
    print("dynamo-operator: the operator process is not built yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
