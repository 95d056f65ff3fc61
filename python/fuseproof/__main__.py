"""__main__.py: python3 -m fuseproof audit (--callable MODULE:FUNCTION | --subject NAME) [options]."""

import sys

from fuseproof._cli import main

sys.exit(main(sys.argv[1:]))
