"""unittest.TestCase assertion methods called inside compiled code (test_unittest.py / test_misc.py)."""
import unittest
import torch
import functools
from harness import probe as _probe, T, main

G = "unittest"
# PyTorch's test/dynamo/test_unittest.py runs with torch._dynamo.config.enable_trace_unittest=True: the reference
# torch.compile run does the same (by default torch.compile breaks on TestCase methods too).
probe = functools.partial(_probe, tc_config={"enable_trace_unittest": True})


class _TC(unittest.TestCase):
    def runTest(self):
        pass


TC = _TC()


@probe(G)
def assert_true(x):
    TC.assertTrue(x.dim() == 2)
    return x + 1


@probe(G)
def assert_false(x):
    TC.assertFalse(x.shape[0] == 7)
    return x + 1


@probe(G)
def assert_equal_ints(x):
    TC.assertEqual(x.shape[0], 2)
    return x * 2


@probe(G)
def assert_equal_lists(x):
    TC.assertEqual(list(x.shape), [2, 3])
    return x * 2


@probe(G)
def assert_not_equal(x):
    TC.assertNotEqual(x.shape[1], 7)
    return x * 2


@probe(G)
def assert_in(x):
    TC.assertIn(3, x.shape)
    return x - 1


@probe(G)
def assert_not_in(x):
    TC.assertNotIn("k", {"a": 1})
    return x - 1


@probe(G)
def assert_is_instance(x):
    TC.assertIsInstance(x, torch.Tensor)
    return x.cos()


@probe(G)
def assert_is_none(x):
    v = None
    TC.assertIsNone(v)
    TC.assertIsNotNone(x)
    return x.sin()


@probe(G)
def assert_greater_less(x):
    TC.assertGreater(x.numel(), 3)
    TC.assertLessEqual(x.dim(), 2)
    return x.sin()


@probe(G)
def assert_almost_equal(x):
    TC.assertAlmostEqual(0.1 + 0.2, 0.3)
    return x.sin()


@probe(G)
def assert_raises_ctx(x):
    with TC.assertRaises(ValueError):
        raise ValueError("x")
    return x.sin()


@probe(G)
def assert_fails(x):
    TC.assertEqual(x.shape[0], 5)
    return x.sin()


@probe(G)
def assert_seq_equal(x):
    TC.assertSequenceEqual((1, 2), [1, 2])
    return x.sin()


@probe(G)
def assert_dict_equal(x):
    TC.assertDictEqual({"a": 1}, {"a": 1})
    return x.sin()


if __name__ == "__main__":
    main(G)
