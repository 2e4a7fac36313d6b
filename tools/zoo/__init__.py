"""The model zoo behind tools/bench_zoo.py: which models (catalogue), how each is built with its inputs (build),
how one model is measured in its own process (measure, child), how the parent drives the children (runner) and
how the results read as tables (summary)."""
