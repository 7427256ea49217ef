import sys

from sengen.cli import main

sys.exit(main())
