"""Entry script for frozen builds (PyInstaller): the same CLI as ``python -m app``.

``freeze_support()`` must run first: the window diagnoses sessions in worker processes, and a frozen
executable re-launches itself for each of them.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from app.cli import main

    sys.exit(main())
