"""Building the models and inputs of one evaluation inside a worker process.

The reference model and the inputs each come from their own pristine copy of the task module
(:func:`cudal1.harness.loading.load_task_copy`); constructors run under a fixed seed, and every floating
parameter and buffer is then redrawn away from its default init (:func:`cudal1.harness.params.randomise_`),
so reference and candidate start from the same values in every process that builds them.

:class:`StateSnapshot` puts a model back to the state it had when the snapshot was taken; it is used for
stateful references (a hidden state kept across calls) so that reference and candidate are compared and
timed from identical state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from .loading import load_task_copy
from .params import randomise_


def exact_fp32() -> None:
    """The numerics every reference runs with: no TF32, no cuDNN autotuning."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False


def _to_device(x: Any, device: torch.device) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, device) for v in x)
    return x


def clone_args(args: list[Any]) -> list[Any]:
    """A copy of an argument list with every tensor cloned (each model gets its own)."""
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def seed_generators(seed: int, device: torch.device) -> None:
    """Seed the generators ``get_inputs()`` and constructors draw from on ``device``: the CPU's, and the GPU's
    when ``device`` is one (what ``torch.manual_seed`` does for these, without its lazy queueing of every other
    device's seeding, which formats a stack trace each call: a noticeable part of a timed batch's input drawing
    on a CPU worker; benchmarks/results/2026-12-05-library-docstring-figures.md)."""
    torch.random.default_generator.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.manual_seed(seed)


def make_inputs(inputs_module: Any, seed: int, device: torch.device) -> list[Any]:
    """Inputs from the pristine task copy, drawn by the task's own ``get_inputs()`` under ``seed``,
    directly on ``device``."""
    seed_generators(seed, device)
    with torch.device(device):
        args = inputs_module.get_inputs()
    return [_to_device(a, device) for a in args]


def construct_model(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> nn.Module:
    """``cls(*init_inputs)`` built under ``seed`` with ``device`` as the default device.

    Raises:
        TypeError: the constructor returned something that is not an ``nn.Module``.
    """
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init_inputs)
    if not isinstance(model, nn.Module):
        raise TypeError(f"{cls.__name__}(...) returned {type(model).__name__}, not an nn.Module")
    return model.to(device)


def load_reference(task_source: str, workdir: Path, seed: int, device: torch.device) -> tuple[nn.Module, Any, list]:
    """(reference model in eval mode with randomised parameters, pristine inputs module, init inputs)."""
    ref_mod = load_task_copy(task_source, workdir, "ref")
    inp_mod = load_task_copy(task_source, workdir, "inputs")
    init_inputs = list(inp_mod.get_init_inputs())
    reference = construct_model(ref_mod.Model, init_inputs, seed, device)
    randomise_(reference, seed)
    reference.eval()
    return reference, inp_mod, init_inputs


def nbytes(args: Any) -> int:
    """Bytes of every tensor in a (nested) argument list or output."""
    if isinstance(args, torch.Tensor):
        return args.numel() * args.element_size()
    if isinstance(args, (list, tuple)):
        return sum(nbytes(a) for a in args)
    return 0


class StateSnapshot:
    """The tensors a model holds, as they are now: parameters, buffers and plain tensor attributes of every
    submodule (``self.hidden = torch.randn(...)`` included). :meth:`restore` puts them back.

    Parameters and buffers are restored in place when the model still holds a tensor of the same shape and dtype
    under that name, else rebound to a fresh copy. A plain tensor attribute is restored in place only while it is
    still the tensor object it was at the snapshot (a state updated in place keeps its storage, which a captured
    CUDA graph may read); one the model rebound since is rebound to a fresh copy: after KernelBench's LSTM forward
    sets ``self.c0 = self.h0``, an in-place restore of ``c0`` would write ``c0``'s values into ``h0``. Attributes
    added after the snapshot are removed.
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        # (module, where, name, copy, the tensor object held at the snapshot)
        self.saved: list[tuple[nn.Module, str, str, torch.Tensor, torch.Tensor]] = []
        self.names: list[tuple[nn.Module, set[str]]] = []
        with torch.no_grad():
            for m in model.modules():
                for name, t in m._parameters.items():
                    if t is not None:
                        self.saved.append((m, "param", name, t.detach().clone(), t))
                for name, t in m._buffers.items():
                    if t is not None:
                        self.saved.append((m, "buffer", name, t.detach().clone(), t))
                for name, v in vars(m).items():
                    if isinstance(v, torch.Tensor) and not name.startswith("_"):
                        self.saved.append((m, "attr", name, v.detach().clone(), v))
                self.names.append((m, {n for n, v in vars(m).items() if isinstance(v, torch.Tensor)}))

    def restore(self) -> None:
        with torch.no_grad():
            for m, now_names in self.names:
                for n in [n for n, v in vars(m).items() if isinstance(v, torch.Tensor) and n not in now_names]:
                    delattr(m, n)
            for m, where, name, copy, held in self.saved:
                store = m._parameters if where == "param" else m._buffers if where == "buffer" else vars(m)
                cur = store.get(name)
                same = isinstance(cur, torch.Tensor) and cur.shape == copy.shape and cur.dtype == copy.dtype
                if same and (where != "attr" or cur is held):
                    cur.copy_(copy)
                elif where == "attr":
                    setattr(m, name, copy.clone())
                elif where == "param":
                    store[name] = nn.Parameter(copy.clone(), requires_grad=False)
                else:
                    store[name] = copy.clone()
