"""What jitcore tells its users: the live console (console.py) and explain() reports (explain.py)."""
