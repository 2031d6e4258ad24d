"""A plugin module that cannot even be imported (a missing dependency)."""
import cricket_dependency_that_does_not_exist  # noqa: F401
