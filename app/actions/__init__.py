"""The actions that change a session (repair, fork, resume) and the read-only verify sweep.

Qt-free so the command line and the window share one implementation; the window only adds
dialogs around these functions.
"""
