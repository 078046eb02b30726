import inferd_no_such_module  # noqa: F401  (the archive cannot start: its load fails with this)
