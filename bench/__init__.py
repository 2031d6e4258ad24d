"""The microbenchmark suite behind ``cricket bench``.

Each ``bench/NAME.py`` also runs alone (``python bench/NAME.py``) and prints its Markdown table;
``bench/suite.py`` runs them together, repeats every figure, and writes one report with plots
(:mod:`bench.report`, :mod:`bench.plots`).
"""
