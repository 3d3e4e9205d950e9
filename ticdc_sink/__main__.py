"""`python -m ticdc_sink`: see ticdc_sink.cli."""

import sys

from ticdc_sink.cli import main

sys.exit(main())
