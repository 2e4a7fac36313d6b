"""Capture: typing's aliases subscripted while the function runs (`torch.jit.annotate(List[Tensor], [])`, an
alias built in the body) fold to the annotation object at capture time (values/constant.py ANNOTATION_TYPES),
never tracing typing's own cache, so the graph does not break there."""

from typing import Callable, Dict, List, Optional, Tuple

import torch

from tests.support import check_against_eager, randn


def test_torch_jit_annotate_with_a_typing_alias_stays_in_one_graph():
    def f(x):
        outs = torch.jit.annotate(List[torch.Tensor], [])
        for i in range(2):
            outs.append(x * (i + 1))
        return torch.cat(outs)

    check_against_eager(f, (randn(3, seed=1),))


def test_an_alias_built_in_the_body_is_the_same_annotation_as_eager():
    def f(x):
        kinds = (Dict[str, Optional[torch.Tensor]], Tuple[int, ...], Callable[[int], int])
        return x + 1, kinds, kinds[0] == Dict[str, Optional[torch.Tensor]]

    check_against_eager(f, (randn(3, seed=1),))
