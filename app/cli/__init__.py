"""The ``sessionscope`` command line: a table of verbs over any store ``open_store`` accepts.

Layout: ``verbs`` (the table and one small handler per verb), ``render`` (each verb's ``--json`` and
text output), ``results`` (values a verb hands its renderers), ``list_rows`` (``list``: every
session as a row, a bad one included), ``parser`` (argparse built from the table, argv id checks,
``--``, usage errors as typed errors), ``output`` (writing that never crashes, the typed error
shape), ``source_run`` (a verb over any source ``app.sources`` opens: a root, a store, a lone
transcript, a support bundle, a case folder), ``run`` (``main``).  No Qt is imported unless the window is asked for.
May import ``app.actions``, ``app.sources``, ``app.paths``, ``app.gui.launch`` (lazily) and the engine.
"""

from app.cli.output import error_payload, report_error, write_out
from app.cli.run import main
from app.paths import default_root

__all__ = ["default_root", "error_payload", "main", "report_error", "write_out"]
