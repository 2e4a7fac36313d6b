"""What jitcore tells its users: the live console and explain() reports.

console.py (say: the one place everything is said; recording; the compile spinner), live.py (the block of each
live event), explain.py (run a call once, collect graphs/breaks/guards into an ExplainReport), view.py and html.py
(the report in a terminal and in a notebook or file), summary.py (the per-process table of `python -m jitcore run`),
describe.py (internal names in the user's words, hints), layout.py (the rich building blocks they share).
"""
