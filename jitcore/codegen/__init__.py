"""Code out: the entry functions that run a captured frame (transform.py)."""
