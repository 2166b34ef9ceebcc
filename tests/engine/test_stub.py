"""python/hpcio/_engine.pyi says what engine/src/lib.rs registers: every public name, every
method and property, every parameter (its name, kind and default)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from hpcio import _engine

STUB = Path(_engine.__file__).with_name("_engine.pyi")

#: A parameter as (name, kind, default); a default of ... in the stub or the signature
#: stands for any default.
Param = tuple[str, str, object]
NO_DEFAULT = "<required>"


def stub_params(function: ast.FunctionDef) -> list[Param]:
    a = function.args
    positional = a.posonlyargs + a.args
    defaults = [NO_DEFAULT] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params: list[Param] = []
    for arg, default in zip(positional, defaults, strict=True):
        kind = "POSITIONAL_ONLY" if arg in a.posonlyargs else "POSITIONAL_OR_KEYWORD"
        params.append((arg.arg, kind, default))
    if a.vararg:
        params.append((a.vararg.arg, "VAR_POSITIONAL", NO_DEFAULT))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append((arg.arg, "KEYWORD_ONLY", NO_DEFAULT if default is None else default))
    if a.kwarg:
        params.append((a.kwarg.arg, "VAR_KEYWORD", NO_DEFAULT))
    return [(n, k, NO_DEFAULT if d is NO_DEFAULT else ast.literal_eval(d)) for n, k, d in params]


def runtime_params(obj: object) -> list[Param]:
    signature = inspect.signature(obj)  # from the __text_signature__ PyO3 writes
    return [
        (p.name, p.kind.name, NO_DEFAULT if p.default is inspect.Parameter.empty else p.default)
        for p in signature.parameters.values()
    ]


def same(stub: list[Param], runtime: list[Param]) -> bool:
    if [(n, k) for n, k, _ in stub] != [(n, k) for n, k, _ in runtime]:
        return False
    return all(
        a == b or (... in (a, b) and NO_DEFAULT not in (a, b))
        for (_, _, a), (_, _, b) in zip(stub, runtime, strict=True)
    )


def is_property(function: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in function.decorator_list)


def stub_module() -> tuple[dict[str, ast.FunctionDef], dict[str, ast.ClassDef], set[str]]:
    tree = ast.parse(STUB.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    constants = {
        n.target.id
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    return functions, classes, constants


FUNCTIONS, CLASSES, CONSTANTS = stub_module()


def public(names) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def test_the_stub_names_every_public_name_of_the_module_and_no_other():
    assert public(dir(_engine)) == public(FUNCTIONS) | public(CLASSES) | CONSTANTS


@pytest.mark.parametrize("name", sorted(public(FUNCTIONS)))
def test_function_parameters_match(name):
    runtime = runtime_params(getattr(_engine, name))
    assert same(stub_params(FUNCTIONS[name]), runtime), f"{name}: the module has {runtime}"


@pytest.mark.parametrize("name", sorted(public(CLASSES)))
def test_class_members_and_parameters_match(name):
    cls = getattr(_engine, name)
    members = {n.name: n for n in CLASSES[name].body if isinstance(n, ast.FunctionDef)}
    properties = {n for n, f in members.items() if is_property(f)}
    methods = public(members) - properties
    runtime = {n: v for n, v in vars(cls).items() if not n.startswith("_")}
    assert public(runtime) == properties | methods
    for member, value in runtime.items():
        is_getter = inspect.isgetsetdescriptor(value) or isinstance(value, property)
        assert is_getter == (member in properties), f"{name}.{member}: property or method?"
        if not is_getter:
            stub = stub_params(members[member])[1:]  # without self
            actual = runtime_params(value)[1:]
            assert same(stub, actual), f"{name}.{member}: the module has {actual}"
    if "__init__" in members:
        actual = runtime_params(cls)
        assert same(stub_params(members["__init__"])[1:], actual), f"{name}(): it has {actual}"
    else:
        with pytest.raises(TypeError):
            cls()  # a stub without __init__ says Python cannot make one


def test_the_comparison_sees_a_difference():
    """The checks above would catch a renamed, reordered or defaulted parameter."""
    (function,) = ast.parse("def f(a, b=1, *, c=None): ...").body
    params = stub_params(function)  # type: ignore[arg-type]
    assert same(params, params)
    assert not same(params, [params[1], params[0], params[2]])
    assert not same(params, [params[0], ("b", "POSITIONAL_OR_KEYWORD", 2), params[2]])
    assert not same(params, [params[0], params[1], ("c", "POSITIONAL_OR_KEYWORD", None)])
    assert same(params, [params[0], ("b", "POSITIONAL_OR_KEYWORD", ...), params[2]])
    assert not same(params, [params[0], ("b", "POSITIONAL_OR_KEYWORD", NO_DEFAULT), params[2]])
