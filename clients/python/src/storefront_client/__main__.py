"""`python -m storefront_client`: see :mod:`storefront_client.cli`."""

import sys

from .cli import main

sys.exit(main())
