"""Tests of the backends package: the registry, entry points and each built-in backend."""
