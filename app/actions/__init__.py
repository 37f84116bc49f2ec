"""The actions that change a session, each a Qt-free plan/execute pair, and the read-only verify sweep.

The command line and the window call the same pair, so the two cannot drift; the window only adds
dialogs between plan and execute, the command line stands in flags for them:

* repair: ``repair.plan_repair`` / ``repair.execute_repair`` (``repair_session`` = both);
* restore: ``backups.plan_restore`` / ``backups.restore_backup``;
* fork: ``fork.plan_fork`` / ``fork.execute_fork`` (``fork_after_turn`` = both);
* resume: ``resume.plan_resume`` / ``resume.execute_resume``;
* copy the raw artifact: ``copy_artifact.plan_copy`` / ``copy_artifact.execute_copy``.

A plan only reads; an execute writes, after its own checks.  May import the standard library,
psutil and the engine; never Qt, ``app.gui`` or ``app.cli``.
"""
