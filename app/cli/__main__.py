"""``python -m app.cli``: the same command line as ``sessionscope``."""

from app.cli.run import main

raise SystemExit(main())
