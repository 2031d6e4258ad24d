"""Compiled extensions built from ``cext/*.pyx`` (see setup.py). Import through the feature packages."""
