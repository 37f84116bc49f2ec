"""``python -m app``: the ``sessionscope`` command line (see ``app.cli``)."""

from app.cli import main

raise SystemExit(main())
