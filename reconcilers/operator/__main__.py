"""`python -m reconcilers.operator`: the `dynamo-operator` command."""

import sys

from reconcilers.operator.cli import main

sys.exit(main())
