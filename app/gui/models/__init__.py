"""One Qt item model per concept: the session list, the header fields, the timeline tree, raw lines."""
