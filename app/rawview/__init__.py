"""The Raw tab's text without Qt: a session artifact's lines as the window shows them, and find in them.

- ``raw_text``      ``RawText``: a decoded artifact's bytes (or a SQLite session's rows) with an index of
                    its lines, each line's kind and event seqs read on first ask (``decode_jsonl``,
                    ``decode_records``)
- ``find_matches``  ``find_in_raw``: which lines hold a text, and which event seqs they carry (run on a
                    worker thread, by chunks)
- ``goto``          go to a line, an event seq or a file byte: what was typed, and the line it means
- ``json_tokens``   a line of JSON as coloured token spans (the detail pane's highlighter), ``\\n`` rendered
- ``json_tree``     a record as a lazily built tree, each node's JSONPath (the detail pane's tree)

Why a package of its own: both are plain values and worker-thread functions, used by the window's raw
table model (``app.gui.models.raw_lines``), its loader and its find bar, and tested without a window.
Import rule: the standard library, orjson and the public ``persistence`` package only; never Qt,
``app.gui``, ``app.actions`` or ``app.cli`` (a ``forbidden`` contract in pyproject.toml checks it).
Import the modules themselves (``app.rawview.raw_text``): this file re-exports nothing.
"""
