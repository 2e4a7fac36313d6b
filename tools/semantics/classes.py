"""Classes and objects: class attributes, getattr/hasattr/setattr with defaults, properties, dataclasses,
inheritance and super(), __getattr__, __slots__, type(), class mutation inside, enum."""
import dataclasses
import enum
import torch
from harness import probe, T, main

G = "classes"


class Cfg:
    hidden = 4
    act = "relu"

    def __init__(self):
        self.scale = 2.0


class Base:
    def f(self, t):
        return t + 1


class Child(Base):
    def f(self, t):
        return super().f(t) * 2


class Lazy:
    def __getattr__(self, name):
        return len(name)


class Slotted:
    __slots__ = ("a",)

    def __init__(self):
        self.a = 3


class Color(enum.Enum):
    RED = 1
    GREEN = 2


@dataclasses.dataclass
class DC:
    w: float
    n: int = 2
    tags: list = dataclasses.field(default_factory=list)


@probe(G)
def class_attr_read(x):
    return x * Cfg.hidden + Cfg().scale


@probe(G)
def getattr_default_missing(x):
    c = Cfg()
    return x + getattr(c, "missing", 7) + getattr(c, "scale", 0)


@probe(G)
def hasattr_checks(x):
    c = Cfg()
    return x + hasattr(c, "scale") + hasattr(c, "nope") * 2 + hasattr(Cfg, "hidden") * 4


@probe(G)
def setattr_then_hasattr(x):
    c = Cfg()
    setattr(c, "newattr", 5)
    return x + hasattr(c, "newattr") + getattr(c, "newattr", 0)


@probe(G, args=lambda: (T(), Cfg()))
def setattr_on_arg(x, c):
    c.scale = 10.0
    c.fresh = 1
    return x * c.scale


@probe(G)
def super_call(x):
    return Child().f(x)


@probe(G)
def isinstance_subclass(x):
    c = Child()
    return x + isinstance(c, Base) + issubclass(Child, Base) * 2


@probe(G)
def dunder_getattr_fallback(x):
    return x + Lazy().abcd


@probe(G)
def slots_object(x):
    s = Slotted()
    s.a += 1
    return x + s.a


@probe(G)
def property_access(x):
    class P:
        def __init__(self):
            self._v = 3

        @property
        def v(self):
            return self._v * 2

        @v.setter
        def v(self, val):
            self._v = val
    p = P()
    p.v = 5
    return x + p.v


@probe(G)
def dataclass_build(x):
    d = DC(2.0)
    d.tags.append(1)
    return x * d.w + d.n + len(d.tags)


@probe(G)
def dataclass_fields_asdict(x):
    d = DC(1.0, 3)
    return x + len(dataclasses.fields(d)) + dataclasses.asdict(d)["n"]


@probe(G)
def dataclass_replace(x):
    d = dataclasses.replace(DC(1.0), n=5)
    return x + d.n


@probe(G)
def enum_compare(x):
    c = Color.GREEN
    return x + (c.value if c == Color.GREEN else 0) + len(Color.RED.name)


@probe(G)
def type_name_and_mro(x):
    return x + len(type(Child()).__name__) + len(Child.__mro__)


@probe(G)
def class_defined_inside(x):
    class Local:
        k = 2

        def go(self, t):
            return t * self.k
    return Local().go(x)


@probe(G)
def instance_dict(x):
    c = Cfg()
    c.extra = 1
    return x + len(c.__dict__) + ("scale" in vars(c))


@probe(G)
def object_eq_hash_user(x):
    class K:
        def __init__(self, v):
            self.v = v

        def __eq__(self, o):
            return self.v == o.v

        def __hash__(self):
            return hash(self.v)
    d = {K(1): 5}
    return x + d[K(1)]


@probe(G)
def user_dunder_ops(x):
    class V:
        def __init__(self, t):
            self.t = t

        def __add__(self, o):
            return V(self.t + o.t)

        def __len__(self):
            return 3

        def __getitem__(self, i):
            return self.t * i
    v = V(x) + V(x)
    return v.t + len(v) + v[2]


@probe(G)
def delattr_then_hasattr(x):
    c = Cfg()
    c.tmp = 1
    del c.tmp
    return x + hasattr(c, "tmp")


@probe(G)
def class_var_mutation_inside(x):
    class Reg:
        items = []
    Reg.items.append(1)
    Reg.count = 2
    return x + len(Reg.items) + Reg.count


@probe(G)
def getattr_on_module_config(x):
    import torch.nn.functional as F
    act = getattr(F, Cfg.act)
    return act(x)


@probe(G)
def abc_abstract(x):
    import abc

    class A(abc.ABC):
        @abc.abstractmethod
        def go(self, t): ...

    class B(A):
        def go(self, t):
            return t * 3
    return B().go(x)


# ---- class statements, made-inside classes and more user-class behaviours (Dynamo's test_misc/test_functions)
class _Meta(type):
    pass


class WithMeta(metaclass=_Meta):
    pass


class Derived(Cfg):
    def __init__(self):
        super().__init__()
        self.extra = 3


@probe(G, calls=4)
def class_statement_each_call(x):
    class Local:
        def __init__(self, t):
            self.t = t

        def double(self):
            return self.t * 2
    return Local(x.sin()).double() + 1


@probe(G)
def class_reassigned_on_object_made_inside(x):
    obj = Cfg()
    obj.__class__ = Derived
    return x + 1, isinstance(obj, Derived), hasattr(obj, "extra")


@probe(G, args=lambda: (T(), WithMeta))
def isinstance_with_metaclass(x, c):
    if isinstance(c, _Meta):
        return x + 2
    return x + 3


@probe(G)
def class_name_through_instance(x):
    tmp = Cfg()
    if tmp.__class__.__name__ == "Cfg":
        return x - 1
    return x


@probe(G)
def type_of_instance_constructs(x):
    c = Child()
    other = type(c)()
    return other.f(x), type(other) is Child


@probe(G)
def subclass_made_inside_of_outside_class(x):
    class Mine(Base):
        def f(self, t):
            return super().f(t) + 10
    m = Mine()
    return m.f(x), isinstance(m, Base)


@probe(G)
def init_subclass_hook(x):
    class Registry:
        seen = []

        def __init_subclass__(cls, **kw):
            Registry.seen.append(cls.__name__)

    class A(Registry):
        pass
    return x + len(Registry.seen)


@probe(G)
def dataclass_frozen_error(x):
    @dataclasses.dataclass(frozen=True)
    class F:
        a: int
    f = F(1)
    try:
        f.a = 2
    except dataclasses.FrozenInstanceError:
        return x + f.a
    return x


@probe(G)
def callable_instance_made_inside(x):
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, t):
            return t * self.k
    return Scale(3)(x)


if __name__ == "__main__":
    main(G)
