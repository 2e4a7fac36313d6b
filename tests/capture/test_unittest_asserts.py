"""Capture: unittest.TestCase assertion methods called inside compiled code are traced like any pure-Python
standard-library code (unittest is in torch_rules' inlined standard library): a passing assertion leaves one
graph, a failing one raises AssertionError with Python's message.
"""

import unittest

import torch

import jitcore as jit
from tests.support import check_against_eager, randn


class _Case(unittest.TestCase):
    def runTest(self):
        pass


CASE = _Case()


def one_graph(fn, *arg_sets):
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*arg_sets[0])


def test_assert_true_false_and_none_on_shapes_leave_one_graph():
    def f(x):
        CASE.assertTrue(x.dim() == 2)
        CASE.assertFalse(x.shape[0] == 7)
        CASE.assertIsNone(None)
        CASE.assertIsNotNone(x)
        CASE.assertIsInstance(x, torch.Tensor)
        return x + 1

    one_graph(f, (randn(2, 3, seed=1),))


def test_assert_equal_dispatches_on_the_type_like_python():
    def f(x):
        CASE.assertEqual(x.shape[0], 2)
        CASE.assertEqual(list(x.shape), [2, 3])
        CASE.assertEqual((1, 2), (1, 2))
        CASE.assertDictEqual({"a": 1}, {"a": 1})
        CASE.assertSequenceEqual((1, 2), [1, 2])
        CASE.assertNotEqual(x.shape[1], 7)
        return x * 2

    one_graph(f, (randn(2, 3, seed=1),))


def test_membership_and_ordering_assertions():
    def f(x):
        CASE.assertIn(3, x.shape)
        CASE.assertNotIn("k", {"a": 1})
        CASE.assertGreater(x.numel(), 3)
        CASE.assertLessEqual(x.dim(), 2)
        CASE.assertAlmostEqual(0.1 + 0.2, 0.3)
        return x - 1

    one_graph(f, (randn(2, 3, seed=1),))


def test_a_failing_assertion_raises_assertion_error_with_pythons_message():
    def f(x):
        CASE.assertEqual(x.shape[0], 5)
        return x.sin()

    check_against_eager(f, (randn(2, 3, seed=1),), expected_graphs=None)
