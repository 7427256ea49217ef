import sys

from sengen.cli.main import main

sys.exit(main())
