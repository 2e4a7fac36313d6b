"""nn.LSTM / GRU / RNN called inside a compiled forward run as torch runs them, between two graphs (as under
torch.compile): the layers before and after stay in graphs, results and gradients match eager, and a second call
reuses the entries."""
import pytest
import torch

from tests.support import check_against_eager, randn


class Stack(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        torch.manual_seed(0)
        self.inp = torch.nn.Linear(4, 4)
        self.rnn = rnn
        self.out = torch.nn.Linear(6, 2)

    def forward(self, x):
        y, _ = self.rnn(self.inp(x).relu())
        return self.out(y).sigmoid()


@pytest.mark.parametrize("make", [
    lambda: torch.nn.LSTM(4, 3, batch_first=True, bidirectional=True),
    lambda: torch.nn.GRU(4, 3, batch_first=True, bidirectional=True),
    lambda: torch.nn.RNN(4, 6, batch_first=True),
], ids=["lstm", "gru", "rnn"])
def test_recurrent_layer_runs_between_two_graphs(make):
    torch.manual_seed(0)
    counting = check_against_eager(Stack(make()), (randn(2, 5, 4),), (randn(2, 5, 4, seed=1),), expected_graphs=2)
    assert counting.op_count == 4  # linear + relu before the layer, linear + sigmoid after it


def test_recurrent_layer_gradients_match_eager():
    import jitcore as jit
    torch.manual_seed(0)
    model = Stack(torch.nn.LSTM(4, 3, batch_first=True, bidirectional=True))
    compiled = jit.compile(model, backend="eager")
    x = randn(2, 5, 4)
    compiled(x).sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(got, model.parameters(), strict=True):
        torch.testing.assert_close(g, p.grad)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)
        self.rnn = torch.nn.LSTM(6, 3, batch_first=True, bidirectional=True)

    def forward(self, x):
        y, _ = self.rnn(self.lin(x).relu())
        return y.sigmoid() + x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Linear(6, 6)
        self.body = torch.nn.Sequential(Block(), Block(), Block())
        self.head = torch.nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.body(self.stem(x).tanh())).softmax(-1)


def test_layers_around_recurrent_layers_in_a_sequential_stay_in_graphs():
    """A break inside a block of an nn.Sequential the user's forward calls: the Sequential's forward gets a
    compiled copy (it only calls the user's layers), so the blocks' layers around each LSTM are graphs too."""
    counting = check_against_eager(Net(), (randn(2, 5, 6),), expected_graphs=None)
    ops = {node.target for gm in counting.graphs for node in gm.graph.nodes if node.op == "call_method"}
    assert {"tanh", "sigmoid", "softmax"} <= ops, ops
