import sys

from veil.cli.main import main

sys.exit(main())
