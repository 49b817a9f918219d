"""The stub shipped beside the module (python/pleshard.pyi) says what the module says: every
function, method and property of each is in the other, with the same parameters, kinds,
defaults and types (the module's as pybind11 writes them in each docstring's signature line);
help(pleshard.Engine) shows every keyword's type and default, and a line on each.
    test_stub.py STUB"""
import ast
import pydoc
import sys

import pleshard
from support import check, fail, pybind11_signature

stub_path = sys.argv[1]
PYBIND11_INTERNALS = {"__module__", "__doc__", "__dict__", "__weakref__"}


class Modern(ast.NodeTransformer):
    """typing's spellings as a stub writes them: Optional[X] as X | None, List as list, and the
    module's own names without `pleshard.` (the stub is the module)."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        name = ast.unparse(node.value)
        if name in ("Optional", "typing.Optional"):
            return ast.BinOp(node.slice, ast.BitOr(), ast.Constant(None))
        if name in ("Union", "typing.Union"):
            items = node.slice.elts
            union = items[0]
            for item in items[1:]:
                union = ast.BinOp(union, ast.BitOr(), item)
            return union
        if name in ("List", "Dict", "Tuple", "Set"):
            node.value = ast.Name(name.lower())
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "pleshard":
            return ast.Name(node.attr)
        return node


def text(node):
    return None if node is None else ast.unparse(Modern().visit(node))


def signature(function):
    """(parameters as (name, kind, type, default), return type), self left out."""
    a = function.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    parameters = [(p.arg, "positional", text(p.annotation), text(d)) for p, d in zip(positional, defaults)][1:]
    if a.vararg:
        parameters.append((a.vararg.arg, "*", text(a.vararg.annotation), None))
    parameters += [(p.arg, "keyword", text(p.annotation), text(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        parameters.append((a.kwarg.arg, "**", text(a.kwarg.annotation), None))
    return parameters, text(function.returns)


def module_signature(name, doc):
    return signature(pybind11_signature(name, doc))


def module_members():
    """{"read_output": signature, "Engine.forward": signature, "Engine.storage": property's, ...}"""
    members = {}
    for name, value in vars(pleshard).items():
        if isinstance(value, type):
            for member, attribute in vars(value).items():
                if member in PYBIND11_INTERNALS or member.startswith("_pybind11"):
                    continue
                if isinstance(attribute, property):
                    members[f"{name}.{member}"] = ("property", module_signature("", attribute.fget.__doc__))
                elif member == "__init__" and attribute.__doc__.startswith("Initialize self"):
                    continue  # a class made only by the module: Python's own __init__
                else:
                    members[f"{name}.{member}"] = ("method", module_signature(member, attribute.__doc__))
        elif callable(value) and type(value).__name__ == "builtin_function_or_method":
            members[name] = ("function", module_signature(name, value.__doc__))
    return members


def stub_members(tree):
    members = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            members[node.name] = ("function", signature(node))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    check(item.args.args and item.args.args[0].arg == "self", f"stub {node.name}.{item.name}: no self")
                    kind = "property" if any(ast.unparse(d) == "property" for d in item.decorator_list) else "method"
                    members[f"{node.name}.{item.name}"] = (kind, signature(item))
    return members


with open(stub_path) as f:
    tree = ast.parse(f.read())
stub = stub_members(tree)
module = module_members()
# The module takes unknown keywords (**kwargs) to refuse them on every rank together; the stub
# leaves them out, so that a type checker refuses them first.
kind, (parameters, returns) = module["Engine.__init__"]
check(parameters[-1][1] == "**", "Engine.__init__ takes no **kwargs: unknown keywords are refused on one rank")
module["Engine.__init__"] = (kind, (parameters[:-1], returns))
check(module, "the module shows no signatures")
missing = sorted(set(module) - set(stub))
extra = sorted(set(stub) - set(module))
check(not missing, f"the stub lacks {missing}")
check(not extra, f"the stub has {extra}, which the module lacks")
for name in sorted(module):
    (kind, (parameters, returns)), (stub_kind, (stub_parameters, stub_returns)) = module[name], stub[name]
    check(kind == stub_kind, f"{name}: a {kind} in the module, a {stub_kind} in the stub")
    for ours, theirs in zip(parameters, stub_parameters):
        check(ours == theirs, f"{name}: the module's parameter {ours}, the stub's {theirs} (name, kind, type, default)")
    check(len(parameters) == len(stub_parameters), f"{name}: the module's parameters {[p[0] for p in parameters]}, "
          f"the stub's {[p[0] for p in stub_parameters]}")
    check(returns == stub_returns, f"{name}: returns {returns} in the module, {stub_returns} in the stub")
versions = [n for n in tree.body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "__version__"]
check(versions and isinstance(pleshard.__version__, str), "the stub or the module lacks __version__: str")

# help(): each keyword's type and default, and a line on each; no parameter shown as a bare object.
shown = pydoc.render_doc(pleshard.Engine)
for fragment in ("storage: str | None = None", "step_tokens: int = 8192", "cuda_graph: bool = False",
                 "comm: mpi4py.MPI.Comm | None = None", "checkpoint: str | bytes | os.PathLike | None = None"):
    check(fragment in shown, f"help(pleshard.Engine) lacks {fragment!r}")
init_doc = pleshard.Engine.__init__.__doc__
keywords = [name for name, _, _, _ in module["Engine.__init__"][1][0]]
unexplained = [k for k in keywords if f"\n  {k}: " not in init_doc]
check(not unexplained, f"Engine.__init__'s doc has no line on {unexplained}")
for item in (pleshard.Engine, pleshard.Embeddings, pleshard.OutputRows, pleshard.read_output):
    page = pydoc.render_doc(item)
    check(": object" not in page and ": handle" not in page, f"help({item.__name__}) shows a bare object: {page}")
print(f"stub: {len(module)} signatures match the module's; help(pleshard.Engine) shows {len(keywords)} keywords "
      "with their types, defaults and a line each")
