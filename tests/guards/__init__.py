"""Tests of the guards package: each check, the tree, and the generated check function."""
