"""math module and operator module."""
import math
import operator
import functools
import torch
from harness import probe, T, main

G = "math_operator"


@probe(G)
def math_sqrt_log(x):
    return x * math.sqrt(2.0) + math.log(10) + math.exp(1)


@probe(G)
def math_ceil_floor(x):
    return x + math.ceil(2.1) + math.floor(2.9)


@probe(G)
def math_prod_gcd(x):
    return x + math.prod([2, 3]) + math.gcd(12, 18) + math.lcm(4, 6)


@probe(G)
def math_on_shape(x):
    d = x.shape[-1]
    return x / math.sqrt(d)


@probe(G)
def math_isclose_isinf(x):
    return x + math.isclose(0.1 + 0.2, 0.3) + math.isinf(float("inf")) * 2 + math.isnan(float("nan")) * 4


@probe(G)
def math_constants(x):
    return x * math.pi + math.e + (0 if math.inf > 1e9 else 1)


@probe(G)
def math_trig(x):
    return x + math.cos(0.5) + math.atan2(1, 2) + math.radians(90)


@probe(G)
def math_pow_fsum(x):
    return x + math.pow(2, 10) + math.fsum([0.1] * 10)


@probe(G)
def math_comb_factorial(x):
    return x + math.comb(5, 2) + math.factorial(4)


@probe(G)
def float_int_ops(x):
    return x + 7 // 2 + 7 % 3 + 2 ** 5 + (-7) // 2 + 7.5 % 2


@probe(G)
def operator_add_mul(x):
    return operator.add(x, 1) * operator.mul(2, 3)


@probe(G)
def operator_getitem(x):
    return operator.getitem([x, x * 2], 1)


@probe(G)
def operator_itemgetter(x):
    g = operator.itemgetter(1)
    return g([x, x * 3]) + operator.itemgetter(0, 2)((1, 2, 3))[1]


@probe(G)
def operator_attrgetter(x):
    g = operator.attrgetter("shape")
    return x + g(x)[0]


@probe(G)
def operator_methodcaller(x):
    return operator.methodcaller("sum", dim=0)(x)


@probe(G)
def reduce_operator(x):
    return functools.reduce(operator.mul, x.shape, 1) + x


@probe(G)
def operator_truth_not(x):
    return x + operator.truth([1]) + operator.not_(0) * 2 + operator.is_(None, None) * 4


@probe(G)
def operator_inplace(x):
    l = [1]
    l = operator.iadd(l, [2])
    return x + len(l) + operator.index(3)


@probe(G)
def operator_contains_eq(x):
    return x + operator.contains([1, 2], 2) + operator.eq("a", "a") * 2


@probe(G)
def bitwise_int_ops(x):
    return x + (5 & 3) + (5 | 2) + (5 ^ 1) + (1 << 3) + (~0)


@probe(G)
def int_methods(x):
    return x + (255).bit_length() + (7).__index__() + int.from_bytes(b"\x01", "big")


@probe(G)
def float_methods(x):
    return x + (2.5).is_integer() + float("inf").__gt__(1.0) * 2 + (3.0).as_integer_ratio()[0]


if __name__ == "__main__":
    main(G)
